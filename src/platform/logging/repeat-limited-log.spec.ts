import { RepeatLimitedLog } from './repeat-limited-log.js';

describe('RepeatLimitedLog', () => {
  let now: number;
  let written: string[];
  let log: RepeatLimitedLog;
  beforeEach(() => {
    now = 1_000_000;
    written = [];
    log = new RepeatLimitedLog(
      (m) => written.push(m),
      30_000,
      () => now,
    );
  });

  it('writes a repeated message once per interval and counts what it held back', () => {
    for (let i = 0; i < 5; i++) log.warn('connect ECONNREFUSED');
    expect(written).toEqual(['connect ECONNREFUSED']);
    now += 29_999;
    log.warn('connect ECONNREFUSED');
    expect(written).toHaveLength(1);
    now += 1;
    log.warn('connect ECONNREFUSED');
    now += 30_000;
    log.warn('connect ECONNREFUSED');
    expect(written).toEqual([
      'connect ECONNREFUSED',
      'connect ECONNREFUSED (5 more times since it was last logged)',
      'connect ECONNREFUSED',
    ]);
  });

  it('limits each message on its own, so interleaved messages do not defeat it', () => {
    for (let i = 0; i < 3; i++) {
      log.warn('relay pass failed');
      log.warn('sweep failed');
    }
    expect(written).toEqual(['relay pass failed', 'sweep failed']);
  });

  it.each([1000, 0])('keeps a bounded memory of messages (%d ms apart)', (step) => {
    for (let i = 0; i < 1000; i++) {
      log.warn(`message ${i}`);
      now += step;
    }
    expect(written).toHaveLength(1000);
    expect((log as unknown as { seen: Map<string, unknown> }).seen.size).toBeLessThanOrEqual(100);
  });
});
