import type { AttemptOutcome } from '../egress/attempt-outcome.js';
import { DestinationState, newDestination, WindowConfig } from './destination-window.js';
import { endedByOutage, outageError, settleAttempt, testNotSentError } from './settle-attempt.js';
import { RetryPolicy } from './retry-policy.js';

const cfg: WindowConfig = { initial: 2, max: 40, threshold: 3, probe: { first: 1000, last: 8000 } };
const fresh = newDestination(cfg);
const proven = (window: number, at = 0): DestinationState => ({ ...fresh, window, lastOkAt: at });
const open = (openedAt: number, nextProbeAt: number, probeMs = 1000): DestinationState => ({
  ...fresh,
  window: 1,
  failures: 3,
  openedAt,
  nextProbeAt,
  probeMs,
  lastError: 'HTTP 500',
});
const policy = new RetryPolicy([1000, 2000], () => 0.5);
const attempt = (
  outcome: AttemptOutcome,
  scheduleAttempts: number,
  startedAt = 5000,
  attemptLimit: number | null = null,
) => ({
  row: { destination: 'https://a.example', schedule_attempts: scheduleAttempts, attempt_limit: attemptLimit },
  startedAt,
  answeredAt: startedAt + 10,
  result: {
    outcome,
    statusCode: outcome.kind === 'http' ? outcome.statusCode : null,
    error: outcome.kind === 'http' ? `HTTP ${outcome.statusCode}` : 'timeout',
    responseBody: null,
    sourceAddress: null,
    answer: null,
    durationMs: 10,
  },
});

describe('settleAttempt: what an attempt comes to for its callback', () => {
  it.each<[string, DestinationState, ReturnType<typeof attempt>, object]>([
    [
      '2xx: delivered',
      proven(5, 0),
      attempt({ kind: 'http', statusCode: 200 }, 0),
      { status: 'delivered', counts: true },
    ],
    [
      'a failure with attempts left: retried on schedule',
      proven(5, 0),
      attempt({ kind: 'http', statusCode: 500 }, 0),
      { status: 'pending', delayMs: 1000, counts: true },
    ],
    [
      'the last attempt failed: dead letter',
      proven(5, 0),
      attempt({ kind: 'http', statusCode: 500 }, 2),
      { status: 'failed', lastError: 'HTTP 500 (attempt schedule exhausted)' },
    ],
    [
      '410: failed at once',
      proven(5, 0),
      attempt({ kind: 'http', statusCode: 410 }, 0),
      { status: 'failed', lastError: 'HTTP 410' },
    ],
    [
      'a failed probe spends no attempt and waits, due',
      open(1000, 2000),
      attempt({ kind: 'timeout' }, 2),
      { status: 'pending', delayMs: 0, counts: false },
    ],
    [
      'an attempt sent before the opening counts as usual',
      open(6000, 7000),
      attempt({ kind: 'timeout' }, 0),
      { status: 'pending', delayMs: 1000, counts: true },
    ],
    [
      'a one-attempt schedule (a test callback) that fails: failed, no retry',
      proven(5, 0),
      attempt({ kind: 'http', statusCode: 500 }, 0, 5000, 1),
      { status: 'failed', lastError: 'HTTP 500 (attempt schedule exhausted)', counts: true },
    ],
    [
      'a one-attempt schedule that is delivered',
      proven(5, 0),
      attempt({ kind: 'http', statusCode: 204 }, 0, 5000, 1),
      { status: 'delivered' },
    ],
    [
      'a one-attempt schedule whose one attempt was a failed probe: failed, not waiting',
      open(1000, 2000),
      attempt({ kind: 'timeout' }, 0, 5000, 1),
      { status: 'failed', counts: true },
    ],
    [
      'a limit above the deployment schedule changes nothing',
      proven(5, 0),
      attempt({ kind: 'http', statusCode: 500 }, 1, 5000, 50),
      { status: 'pending', delayMs: 2000 },
    ],
  ])('%s', (_name, s, a, expected) => expect(settleAttempt(s, a, 0, policy, cfg)).toMatchObject(expected));
});

describe('settleAttempt: what an attempt comes to if the callback changed while it was under way', () => {
  it('redelivered meanwhile: its fresh schedule stands, due now and unspent, unless this attempt delivered it', () => {
    const failed = settleAttempt(proven(5, 0), attempt({ kind: 'http', statusCode: 500 }, 2), 0, policy, cfg);
    expect(failed.status).toBe('failed');
    expect(failed.ifRedelivered).toEqual({
      status: 'pending',
      delayMs: 0,
      lastError: 'HTTP 500 (attempt schedule exhausted)',
      keepsError: false,
      counts: false,
    });
    const delivered = settleAttempt(proven(5, 0), attempt({ kind: 'http', statusCode: 204 }, 0), 0, policy, cfg);
    expect(delivered.ifRedelivered).toMatchObject({ status: 'delivered', delayMs: null });
  });

  it(
    'its URL removed meanwhile: failed, keeping the removal as its lastError, ' + 'unless this attempt delivered it',
    () => {
      const retried = settleAttempt(proven(5, 0), attempt({ kind: 'http', statusCode: 503 }, 0), 0, policy, cfg);
      expect(retried.status).toBe('pending');
      expect(retried.ifUrlRemoved).toEqual({
        status: 'failed',
        delayMs: null,
        lastError: null,
        keepsError: true,
        counts: false,
      });
      const delivered = settleAttempt(proven(5, 0), attempt({ kind: 'http', statusCode: 200 }, 0), 0, policy, cfg);
      expect(delivered.ifUrlRemoved).toMatchObject({ status: 'delivered' });
    },
  );
});

describe('settleAttempt: what an attempt was, for its log row', () => {
  const placed = (s: DestinationState, a: ReturnType<typeof attempt>) => settleAttempt(s, a, 0, policy, cfg).place;
  const http500 = { kind: 'http', statusCode: 500 } as const;
  it(
    'the first of its schedule, a retry, the probe of an open destination, ' + 'with its place and how many it allows',
    () => {
      expect(placed(proven(5, 0), attempt(http500, 0))).toEqual({
        kind: 'first',
        scheduleNumber: 1,
        scheduleAllows: 3,
      });
      expect(placed(proven(5, 0), attempt(http500, 2))).toEqual({
        kind: 'retry',
        scheduleNumber: 3,
        scheduleAllows: 3,
      });
      expect(placed(open(1000, 2000), attempt(http500, 1))).toEqual({
        kind: 'probe',
        scheduleNumber: 2,
        scheduleAllows: 3,
      });
    },
  );

  it("the first after a redelivery or a replay is that repair's; a test callback's one attempt is a test's", () => {
    const restarted = (by: 'redelivery' | 'replay') => ({
      ...attempt(http500, 0),
      row: { ...attempt(http500, 0).row, restarted_by: by },
    });
    expect(placed(proven(5, 0), restarted('replay')).kind).toBe('replay');
    expect(placed(proven(5, 0), restarted('redelivery')).kind).toBe('redelivery');
    const test = attempt(http500, 0, 5000, 1);
    const row = { ...test.row, test: true };
    expect(placed(proven(5, 0), { ...test, row })).toEqual({ kind: 'test', scheduleNumber: 1, scheduleAllows: 1 });
  });
});

describe('the lastError of a callback failed without an attempt', () => {
  it(
    'names the outage when its schedule ended behind an open circuit, ' +
      'and the open circuit when a test callback is not sent',
    () => {
      const since = Date.UTC(2026, 10, 28, 9, 30, 0, 250);
      expect(outageError('https://a.example', since, 'HTTP 503')).toBe(
        'destination https://a.example unavailable ' +
          '(circuit open since 2026-11-28T09:30:00.250Z, last error: HTTP 503); ' +
          'attempt schedule ended while waiting',
      );
      expect(outageError('https://a.example', since, null)).toBe(
        'destination https://a.example unavailable (circuit open since 2026-11-28T09:30:00.250Z); ' +
          'attempt schedule ended while waiting',
      );
      // Read back where a callback's next step is shown (the portal): only the outage's text says so.
      const ended = [outageError('https://a.example', since, 'HTTP 503; attempt schedule ended while waiting')];
      ended.push(outageError('https://a.example', since, null));
      expect(ended.map(endedByOutage)).toEqual([true, true]);
      const others = ['HTTP 500 (attempt schedule exhausted)', 'attempt schedule ended while waiting', null];
      expect(others.map(endedByOutage)).toEqual([false, false, false]);
      expect(testNotSentError('https://a.example', since, 'HTTP 503')).toBe(
        'destination https://a.example circuit open since 2026-11-28T09:30:00.250Z (last error: HTTP 503); ' +
          'test callback not sent',
      );
    },
  );
});
