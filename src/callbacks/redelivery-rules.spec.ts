import { DomainError } from '../platform/http/domain-error.js';
import { RedeliveryFacts, redeliveryOf } from './redelivery-rules.js';

const facts = (f: Partial<RedeliveryFacts> = {}): RedeliveryFacts => ({
  status: 'failed',
  test: false,
  urlRemovedAt: null,
  ...f,
});
const refusal = (f: Partial<RedeliveryFacts>) => {
  const r = redeliveryOf(facts(f));
  if (!(r instanceof DomainError)) throw new Error(`not refused: ${r}`);
  return { code: r.code, kind: r.kind, message: r.message };
};

describe('the one redelivery rule', () => {
  it.each([
    ['delivered', 'fresh_schedule'],
    ['failed', 'fresh_schedule'],
    ['pending', 'due_now'],
    ['sending', 'under_way'],
  ] as const)('a %s callback: %s (an open destination refuses none: its probe is brought forward)', (status, move) => {
    expect(redeliveryOf(facts({ status }))).toBe(move);
  });

  it('refuses a test callback first, then one whose URL was removed', () => {
    const removed = { urlRemovedAt: new Date('2026-11-28T00:00:00Z') };
    const test = refusal({ test: true, ...removed });
    expect(test).toMatchObject({ code: 'test_callback_not_redeliverable', kind: 'conflict' });
    expect(refusal(removed)).toEqual({
      code: 'callback_url_removed',
      kind: 'conflict',
      message:
        'Callback cannot be redelivered: its callback URL was removed at 2026-11-28T00:00:00.000Z ' +
        '(current status: failed)',
    });
  });
});
