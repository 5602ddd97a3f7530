import { DomainError } from '../platform/http/domain-error.js';
import { RedeliveryFacts, redeliveryOf } from './redelivery-rules.js';

const NOW = new Date('2026-11-29T10:00:00.000Z');
const facts = (f: Partial<RedeliveryFacts> = {}): RedeliveryFacts => ({
  status: 'failed',
  test: false,
  urlRemovedAt: null,
  origin: 'https://hooks.example.com',
  openedAt: null,
  nextProbeAt: null,
  ...f,
});
const refusal = (f: Partial<RedeliveryFacts>) => {
  const r = redeliveryOf(facts(f), NOW);
  if (!(r instanceof DomainError)) throw new Error(`not refused: ${r}`);
  return { code: r.code, kind: r.kind, message: r.message };
};

describe('the one redelivery rule', () => {
  it.each([
    ['delivered', 'fresh_schedule'],
    ['failed', 'fresh_schedule'],
    ['pending', 'due_now'],
    ['sending', 'under_way'],
  ] as const)('a %s callback of a closed destination: %s', (status, move) => {
    expect(redeliveryOf(facts({ status }), NOW)).toBe(move);
  });

  it.each(['delivered', 'failed', 'pending', 'sending'] as const)('refuses a %s callback while its destination is open, naming the next probe', (status) => {
    const r = refusal({ status, openedAt: new Date('2026-11-29T09:00:00Z'), nextProbeAt: new Date('2026-11-29T10:05:00Z') });
    expect(r).toEqual({
      code: 'destination_open',
      kind: 'conflict',
      message: `Callback cannot be redelivered now: its destination https://hooks.example.com is open (circuit open since 2026-11-29T09:00:00.000Z); its next probe is at 2026-11-29T10:05:00.000Z, redeliver after it (current status: ${status === 'sending' ? 'pending' : status})`,
    });
  });

  it('says a probe whose time has passed is under way', () => {
    expect(refusal({ openedAt: new Date('2026-11-29T09:00:00Z'), nextProbeAt: new Date('2026-11-29T09:59:00Z') }).message).toContain('its probe is under way (due since 2026-11-29T09:59:00.000Z)');
  });

  it('refuses a test callback first, then one whose URL was removed, then an open destination', () => {
    const open = { openedAt: new Date('2026-11-29T09:00:00Z'), nextProbeAt: new Date('2026-11-29T10:05:00Z') };
    const removed = { urlRemovedAt: new Date('2026-11-28T00:00:00Z') };
    expect(refusal({ test: true, ...removed, ...open }).code).toBe('test_callback_not_redeliverable');
    expect(refusal({ ...removed, ...open }).code).toBe('callback_url_removed');
    expect(refusal(open).code).toBe('destination_open');
  });
});
