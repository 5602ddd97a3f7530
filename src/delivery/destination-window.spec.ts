import type { AttemptOutcome } from '../egress/attempt-outcome.js';
import { safeText } from '../egress/callback-sender.js';
import { circuitOf, DestinationState, newDestination, roomOf, settleDestination, WindowConfig } from './destination-window.js';
import { settleAttempt } from './settle-attempt.js';
import { RetryPolicy } from './retry-policy.js';

const cfg: WindowConfig = { initial: 2, max: 40, threshold: 3, probe: { first: 1000, last: 8000 } };
const fresh = newDestination(cfg);
const proven = (window: number, at = 0): DestinationState => ({ ...fresh, window, lastOkAt: at });
const open = (openedAt: number, nextProbeAt: number, probeMs = 1000): DestinationState => ({ ...fresh, window: 1, failures: 3, openedAt, nextProbeAt, probeMs, lastError: 'HTTP 500' });
const at = (result: 'ok' | 'fail' | 'answered' | 'none', t: number, startedAt = t) => ({ result, startedAt, at: t, error: result === 'fail' ? 'HTTP 500' : null });

describe('settleDestination: one outcome folded into a window and breaker', () => {
  it.each<[string, DestinationState, ReturnType<typeof at>, Partial<DestinationState>, string | null]>([
    ['a success grows the window by one', proven(5), at('ok', 10), { window: 6, failures: 0, lastOkAt: 10 }, null],
    ['the window stops at max', proven(40), at('ok', 10), { window: 40 }, null],
    ['another answer (4xx) counts as up', proven(5), at('answered', 10), { window: 6, failures: 0 }, null],
    ['a failure halves the window and counts', proven(9), at('fail', 10), { window: 4, failures: 1, lastError: 'HTTP 500' }, null],
    ['the window never goes below one', proven(1), at('fail', 10), { window: 1, failures: 1 }, null],
    ['the threshold-th failure opens the circuit', { ...proven(4), failures: 2 }, at('fail', 10), { failures: 3, openedAt: 10, nextProbeAt: 1010, probeMs: 1000 }, 'opened'],
    ['a request sent before the opening says nothing', open(100, 1100), at('ok', 150, 50), { openedAt: 100, window: 1 }, null],
    ['an answered probe closes it with the initial window', open(100, 1100), at('ok', 1200, 1150), { openedAt: null, nextProbeAt: null, failures: 0, window: 2, lastOkAt: 1200 }, 'closed'],
    ['a 4xx probe closes it too: the destination is up', open(100, 1100), at('answered', 1200, 1150), { openedAt: null }, 'closed'],
    ['a failed probe doubles the interval', open(100, 1100, 1000), at('fail', 1200, 1150), { openedAt: 100, probeMs: 2000, nextProbeAt: 3200 }, 'reopened'],
    ['the interval stops at its last', open(100, 1100, 8000), at('fail', 1200, 1150), { probeMs: 8000, nextProbeAt: 9200 }, 'reopened'],
    ['no request sent (refused) changes nothing', open(100, 1100), at('none', 1200, 1150), { openedAt: 100, nextProbeAt: 1100 }, null],
  ])('%s', (_name, s, a, expected, transition) => {
    const r = settleDestination(s, a, cfg);
    expect(r.state).toMatchObject(expected);
    expect(r.transition).toBe(transition);
  });
});

describe('roomOf: how many more a destination may have in flight', () => {
  it.each<[string, DestinationState, number, number, number]>([
    ['a new destination: the initial window', fresh, 0, 0, 2],
    ['a proven one: its window less what is in flight', proven(30, 0), 10, 1000, 20],
    ['a proven one idle for five minutes is unproven again', proven(30, 0), 0, 5 * 60_000, 2],
    ['one with a failure since its last answer: the initial window', { ...proven(30, 0), failures: 1 }, 0, 1000, 2],
    ['never below zero', proven(3, 0), 5, 1000, 0],
    ['open, probe due, nothing in flight: one probe', open(0, 1000), 0, 1000, 1],
    ['open, probe not yet due', open(0, 1000), 0, 999, 0],
    ['open, its probe in flight', open(0, 1000), 1, 5000, 0],
  ])('%s', (_name, s, sending, now, room) => expect(roomOf(s, sending, now, cfg)).toBe(room));

  it('reads half-open while the probe is in flight', () => {
    expect([circuitOf(fresh, 3), circuitOf(open(0, 0), 0), circuitOf(open(0, 0), 1)]).toEqual(['closed', 'open', 'half_open']);
  });
});

describe('settleAttempt: what an attempt comes to for its callback', () => {
  const policy = new RetryPolicy([1000, 2000], () => 0.5);
  const attempt = (outcome: AttemptOutcome, scheduleAttempts: number, startedAt = 5000, attemptLimit: number | null = null) => ({
    row: { destination: 'https://a.example', schedule_attempts: scheduleAttempts, attempt_limit: attemptLimit },
    startedAt,
    answeredAt: startedAt + 10,
    result: { outcome, statusCode: outcome.kind === 'http' ? outcome.statusCode : null, error: outcome.kind === 'http' ? `HTTP ${outcome.statusCode}` : 'timeout', responseBody: null, sourceAddress: null, durationMs: 10 },
  });
  it.each<[string, DestinationState, ReturnType<typeof attempt>, object]>([
    ['2xx: delivered', proven(5, 0), attempt({ kind: 'http', statusCode: 200 }, 0), { status: 'delivered', counts: true }],
    ['a failure with attempts left: retried on schedule', proven(5, 0), attempt({ kind: 'http', statusCode: 500 }, 0), { status: 'pending', delayMs: 1000, counts: true }],
    ['the last attempt failed: dead letter', proven(5, 0), attempt({ kind: 'http', statusCode: 500 }, 2), { status: 'failed', lastError: 'HTTP 500 (attempt schedule exhausted)' }],
    ['410: failed at once', proven(5, 0), attempt({ kind: 'http', statusCode: 410 }, 0), { status: 'failed', lastError: 'HTTP 410' }],
    ['a failed probe spends no attempt and waits, due', open(1000, 2000), attempt({ kind: 'timeout' }, 2), { status: 'pending', delayMs: 0, counts: false }],
    ['an attempt sent before the opening counts as usual', open(6000, 7000), attempt({ kind: 'timeout' }, 0), { status: 'pending', delayMs: 1000, counts: true }],
    ['a one-attempt schedule (a test callback) that fails: failed, no retry', proven(5, 0), attempt({ kind: 'http', statusCode: 500 }, 0, 5000, 1), { status: 'failed', lastError: 'HTTP 500 (attempt schedule exhausted)', counts: true }],
    ['a one-attempt schedule that is delivered', proven(5, 0), attempt({ kind: 'http', statusCode: 204 }, 0, 5000, 1), { status: 'delivered' }],
    ['a one-attempt schedule whose one attempt was a failed probe: failed, not waiting', open(1000, 2000), attempt({ kind: 'timeout' }, 0, 5000, 1), { status: 'failed', counts: true }],
    ['a limit above the deployment schedule changes nothing', proven(5, 0), attempt({ kind: 'http', statusCode: 500 }, 1, 5000, 50), { status: 'pending', delayMs: 2000 }],
  ])('%s', (_name, s, a, expected) => expect(settleAttempt(s, a, 0, policy, cfg)).toMatchObject(expected));
});

describe('safeText', () => {
  it.each([
    [[0x6f, 0x6b], 'ok'],
    [[0x61, 0x00, 0x62], 'a\ufffdb'],
    [[0xff, 0xfe], '\ufffd\ufffd'],
    [[0xe2, 0x82], '\ufffd'], // a character cut at the 1 KiB mark
    [[0xed, 0xa0, 0x80], '\ufffd\ufffd\ufffd'], // an encoded lone surrogate is not UTF-8
  ])('%j → %j', (bytes, text) => expect(safeText(Buffer.from(bytes))).toBe(text));
});
