import { OutlookAttempt, OutlookCallback, outlookOf, Schedule } from './callback-outlook.js';

const at = (s: number) => new Date(Date.UTC(2026, 10, 29, 12, 0, s));
/** Three attempts (two delays of 10 s); the outage's text as settle-attempt.ts's outageError ends it. */
const SCHEDULE: Schedule = {
  maxAttempts: 3,
  totalMs: 20_000,
  endedByOutage: (e) => e?.endsWith('); attempt schedule ended while waiting') ?? false,
};
const OUTAGE =
  'destination https://a.example unavailable (circuit open since 2026-11-29T11:59:00.250Z); ' +
  'attempt schedule ended while waiting';

const callback = (over: Partial<OutlookCallback> = {}): OutlookCallback => ({
  status: 'pending',
  test: false,
  attemptLimit: null,
  scheduleAttempts: 0,
  scheduleStartedAt: at(0),
  createdAt: at(0),
  deliveredAt: null,
  urlRemovedAt: null,
  lastError: null,
  nextAttemptAt: at(0).toISOString(),
  ...over,
});
const attempt = (number: number, s: number, statusCode: number | null = 500): OutlookAttempt => ({
  number,
  startedAt: at(s),
  statusCode,
});
const next = (c: OutlookCallback, attempts: OutlookAttempt[] = []) => outlookOf(c, attempts, null, SCHEDULE).next;

describe('what comes next for a callback, from what its rows keep', () => {
  it('pending: the next attempt and how many its schedule has left; sending: one under way', () => {
    const c = callback({ scheduleAttempts: 1, nextAttemptAt: at(10).toISOString() });
    expect(next(c, [attempt(1, 0)])).toBe(
      'Next attempt at 2026-11-29 12:00:10 UTC: 2 of the 3 attempts its schedule allows remain, that one included.',
    );
    expect(next({ ...c, status: 'sending' })).toBe(
      'An attempt is under way now: attempt 2 of the 3 its schedule allows.',
    );
  });

  it('behind an open circuit: its next probe, and when it fails if the destination stays open', () => {
    const circuit = { openedAt: at(5).getTime(), nextProbeAt: at(30).getTime(), probeAsked: false };
    const c = callback({ scheduleAttempts: 1, nextAttemptAt: at(30).toISOString() });
    expect(outlookOf(c, [attempt(1, 0)], circuit, SCHEDULE).next).toBe(
      'Waiting for its destination, whose circuit is open since 2026-11-29 12:00:05 UTC: nothing goes there ' +
        'before its next probe, at 2026-11-29 12:00:30 UTC (this callback or one before it is the probe). ' +
        '2 of the 3 attempts its schedule allows remain. If the destination is still open at ' +
        '2026-11-29 12:00:20 UTC, it fails without another attempt.',
    );
  });

  it('settled: why none comes, each way a callback ends', () => {
    expect(next(callback({ status: 'delivered', deliveredAt: at(3) }))).toBe(
      'None: delivered at 2026-11-29 12:00:03 UTC. Redeliver sends it again.',
    );
    const failed = callback({ status: 'failed', nextAttemptAt: null });
    expect(next({ ...failed, urlRemovedAt: at(4) })).toMatch(
      /^None: its callback URL was removed at 2026-11-29 12:00:04 UTC/,
    );
    expect(next({ ...failed, lastError: OUTAGE })).toBe(
      'None. Failed without an attempt: its destination stayed open until its schedule ended ' +
        '(2026-11-29 12:00:20 UTC). ' +
        'Redeliver sends it again with a fresh schedule.',
    );
    expect(next({ ...failed, lastError: OUTAGE, scheduleAttempts: 1 }, [attempt(1, 0)])).toMatch(
      /^None\. Failed after 1 attempts: /,
    );
    const three = [attempt(1, 0), attempt(2, 10), attempt(3, 20)];
    expect(next({ ...failed, scheduleAttempts: 3, lastError: 'HTTP 500 (attempt schedule exhausted)' }, three)).toMatch(
      /^None: it failed after the last attempt of its schedule \(3 of 3\)\./,
    );
    expect(next({ ...failed, scheduleAttempts: 1, lastError: 'HTTP 410' }, [attempt(1, 0, 410)])).toMatch(
      /answered 410 Gone/,
    );
    expect(next({ ...failed, scheduleAttempts: 1, lastError: 'address refused' }, [attempt(1, 0, null)])).toMatch(
      /no request could go out/,
    );
    const test = { ...failed, test: true, attemptLimit: 1 };
    expect(next(test)).toMatch(/^None: a test callback is not sent while its destination's circuit is open/);
    expect(next({ ...test, scheduleAttempts: 1 }, [attempt(1, 0)])).toBe(
      'None: a test callback gets one attempt, and it did not succeed. Send a new one.',
    );
  });
});

describe("an attempt's place in a schedule", () => {
  it('first attempt, retries n of N − 1 without a probe among them; before a redelivery, an earlier schedule', () => {
    const c = callback({ scheduleAttempts: 2, nextAttemptAt: at(30).toISOString() });
    const { kinds, note } = outlookOf(c, [attempt(1, 0), attempt(2, 10)], null, SCHEDULE);
    expect([...kinds]).toEqual([
      [1, 'first attempt'],
      [2, 'retry 1 of 2'],
    ]);
    expect(note).toBeNull();
    const redelivered = callback({ scheduleAttempts: 1, scheduleStartedAt: at(15) });
    const after = outlookOf(redelivered, [attempt(1, 0), attempt(2, 10), attempt(3, 15)], null, SCHEDULE).kinds;
    expect([...after.values()]).toEqual([
      'before its redelivery: an earlier schedule',
      'before its redelivery: an earlier schedule',
      'the redelivery at 2026-11-29 12:00:15 UTC: first attempt',
    ]);
  });

  it('counts the probes among them when the rows cannot say which ones they were', () => {
    const c = callback({ scheduleAttempts: 1 });
    const { kinds, note } = outlookOf(c, [attempt(1, 0), attempt(2, 10), attempt(3, 20)], null, SCHEDULE);
    expect(new Set(kinds.values())).toEqual(new Set(['in its schedule']));
    expect(note).toBe(
      '2 of the 3 attempts of its schedule were probes of its open destination, ' +
        'which spend none of the 3 attempts its schedule allows.',
    );
    expect([
      ...outlookOf(
        callback({ test: true, attemptLimit: 1, scheduleAttempts: 1 }),
        [attempt(1, 0)],
        null,
        SCHEDULE,
      ).kinds.values(),
    ]).toEqual(["a test callback's one attempt"]);
  });
});
