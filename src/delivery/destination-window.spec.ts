import {
  circuitOf,
  DestinationState,
  newDestination,
  roomOf,
  settleDestination,
  WindowConfig,
} from './destination-window.js';

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
const at = (result: 'ok' | 'fail' | 'silent' | 'answered' | 'none', t: number, startedAt = t) => ({
  result,
  startedAt,
  at: t,
  error: { fail: 'HTTP 500', silent: 'timeout: no answer within 15000 ms' }[result as string] ?? null,
});

describe('settleDestination: one outcome folded into a window and breaker', () => {
  it.each<[string, DestinationState, ReturnType<typeof at>, Partial<DestinationState>, string | null]>([
    ['a success grows the window by one', proven(5), at('ok', 10), { window: 6, failures: 0, lastOkAt: 10 }, null],
    ['the window stops at max', proven(40), at('ok', 10), { window: 40 }, null],
    ['another answer (4xx) counts as up', proven(5), at('answered', 10), { window: 6, failures: 0 }, null],
    [
      'a failure halves the window and counts',
      proven(9),
      at('fail', 10),
      { window: 4, failures: 1, lastError: 'HTTP 500' },
      null,
    ],
    ['the window never goes below one', proven(1), at('fail', 10), { window: 1, failures: 1 }, null],
    [
      'the threshold-th failure opens the circuit',
      { ...proven(4), failures: 2 },
      at('fail', 10),
      { failures: 3, openedAt: 10, nextProbeAt: 1010, probeMs: 1000 },
      'opened',
    ],
    [
      'silence from a destination that never answered opens it at once',
      fresh,
      at('silent', 10),
      { failures: 1, openedAt: 10, nextProbeAt: 1010, lastError: 'timeout: no answer within 15000 ms' },
      'opened',
    ],
    [
      'silence from one that answered before counts once',
      proven(4),
      at('silent', 10),
      { window: 2, failures: 1, openedAt: null },
      null,
    ],
    [
      'a 5xx from a destination that never answered counts once',
      fresh,
      at('fail', 10),
      { window: 1, failures: 1, openedAt: null },
      null,
    ],
    [
      'a request sent before the opening says nothing',
      open(100, 1100),
      at('ok', 150, 50),
      { openedAt: 100, window: 1 },
      null,
    ],
    [
      'an answered probe closes it with the initial window',
      open(100, 1100),
      at('ok', 1200, 1150),
      { openedAt: null, nextProbeAt: null, failures: 0, window: 2, lastOkAt: 1200 },
      'closed',
    ],
    [
      'a 4xx probe closes it too: the destination is up',
      open(100, 1100),
      at('answered', 1200, 1150),
      { openedAt: null },
      'closed',
    ],
    [
      'a failed probe doubles the interval',
      open(100, 1100, 1000),
      at('fail', 1200, 1150),
      { openedAt: 100, probeMs: 2000, nextProbeAt: 3200 },
      'reopened',
    ],
    [
      'the interval stops at its last',
      open(100, 1100, 8000),
      at('fail', 1200, 1150),
      { probeMs: 8000, nextProbeAt: 9200 },
      'reopened',
    ],
    [
      'no request sent (refused) changes nothing',
      open(100, 1100),
      at('none', 1200, 1150),
      { openedAt: 100, nextProbeAt: 1100 },
      null,
    ],
    // A redelivery asked for while a probe was in flight goes next, whatever the doubled interval says.
    [
      'a failed probe keeps a probe asked for meanwhile',
      { ...open(100, 1100), probeAsked: true },
      at('fail', 1200, 1150),
      { probeMs: 2000, nextProbeAt: 3200, probeAsked: true },
      'reopened',
    ],
    [
      'a closing ends a probe asked for',
      { ...open(100, 1100), probeAsked: true },
      at('ok', 1200, 1150),
      { openedAt: null, probeAsked: false },
      'closed',
    ],
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
    ['open, its probe not due but asked for: one probe now', { ...open(0, 9000), probeAsked: true }, 0, 1000, 1],
    [
      'open, a probe asked for while one is in flight: none until it settles',
      { ...open(0, 9000), probeAsked: true },
      1,
      1000,
      0,
    ],
  ])('%s', (_name, s, sending, now, room) => expect(roomOf(s, sending, now, cfg)).toBe(room));

  it(
    'reads open only while a probe time is still to come; ' +
      'half-open while the probe is in flight, due or asked for',
    () => {
      const asked = { ...open(0, 9000), probeAsked: true };
      expect([
        circuitOf(fresh, 3, 500),
        circuitOf(open(0, 1000), 0, 500),
        circuitOf(open(0, 1000), 1, 500),
        circuitOf(open(0, 1000), 0, 1000),
        circuitOf(asked, 0, 500),
      ]).toEqual([
        'closed',
        'open',
        'half_open',
        // Due with nothing waiting: its next callback, fresh or redelivered, is the probe.
        'half_open',
        'half_open',
      ]);
    },
  );
});
