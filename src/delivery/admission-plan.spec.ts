import {
  ADMIT_ROUNDS,
  admissionRounds,
  Budget,
  Candidate,
  FRESH_MS,
  planAdmission,
  Served,
  servedAfter,
} from './admission-plan.js';
import { DestinationState, newDestination, WindowConfig } from './destination-window.js';

const cfg: WindowConfig = { initial: 2, max: 40, threshold: 3, probe: { first: 1000, last: 8000 } };
const fresh = newDestination(cfg);
const proven = (window: number, at = 0): DestinationState => ({ ...fresh, window, lastOkAt: at });
const failing = (failures: number): DestinationState => ({ ...fresh, window: 1, failures, lastError: 'timeout' });
const c = (key: string, state: DestinationState, sending: number, oldestDue: number, waiting = 0): Candidate => ({
  key,
  state,
  sending,
  waiting,
  oldestDue,
});
const budget = (slots: number, sending = 0, riskySending = 0, failingSending = 0): Budget => ({
  slots,
  sending,
  riskySending,
  failingSending,
  waitingPlaces: 5 * slots,
  waiting: 0,
});
const none: Served = new Map();
const sorted = (plan: Map<string, number>) => [...plan].sort();
/** A whole pass (its rounds) against destinations holding `due` callbacks each (none named: plenty); what each got. */
function wholePass(
  candidates: Candidate[],
  b: Budget,
  now: number,
  served: Served,
  due: Record<string, number>,
): Map<string, number> {
  const total = new Map<string, number>();
  const rounds = admissionRounds(candidates, b, now, cfg, served);
  for (let round = rounds.next(); !round.done;) {
    const got = new Map(
      [...round.value].map(([o, n]): [string, number] => [o, Math.min(n, (due[o] ?? Infinity) - (total.get(o) ?? 0))]),
    );
    for (const [o, n] of got) total.set(o, (total.get(o) ?? 0) + n);
    round = rounds.next(got);
  }
  return new Map([...total].filter(([, n]) => n > 0));
}

describe('planAdmission: the slots of one pass', () => {
  it('admits nothing when the slots are taken', () => {
    expect([...planAdmission([c('a', proven(40, 0), 0, 10)], budget(20, 20), 100, cfg, none)]).toEqual([]);
  });

  it('shares scarce slots one at a time, fewest in flight first, then oldest due', () => {
    const plan = planAdmission([c('b', proven(40, 0), 0, 20), c('x', proven(40, 0), 0, 5)], budget(12), 100, cfg, none);
    expect(sorted(plan)).toEqual([
      ['b', 4],
      ['x', 4],
    ]);
  });

  it('gives each destination up to its room when slots are plenty', () => {
    const plan = planAdmission(
      [c('b', proven(40, 0), 0, 20), c('a', proven(40, 0), 35, 10)],
      budget(200, 35),
      100,
      cfg,
      none,
    );
    expect(sorted(plan)).toEqual([
      ['a', 5],
      ['b', 40],
    ]);
  });

  it(
    'gives no slot to a destination holding as many as are left free: ' + 'the last ones stay for those holding fewer',
    () => {
      // Three slow destinations hold 40 each; of 150 slots, 30 are free.
      const slow = ['s1', 's2', 's3'].map((o) => c(o, proven(40, 0), 40, 1));
      const plan = planAdmission([...slow, c('healthy', proven(40, 0), 0, 100)], budget(150, 120), 100, cfg, none);
      expect(sorted(plan)).toEqual([['healthy', 15]]);
      // Holding 20 each of 150, they grow until each holds as many as are left free: 37 stay free.
      const busy = ['s1', 's2', 's3'].map((o) => c(o, proven(40, 0), 20, 1));
      expect(sorted(planAdmission(busy, budget(150, 60), 100, cfg, none))).toEqual([
        ['s1', 18],
        ['s2', 18],
        ['s3', 17],
      ]);
    },
  );

  it('admits no unproven callback while their share is overdrawn', () => {
    const plan = planAdmission(
      [c('new', fresh, 0, 10), c('b', proven(40, 0), 0, 20)],
      budget(10, 6, 6),
      100,
      cfg,
      none,
    );
    expect([...plan]).toEqual([['b', 2]]);
  });

  it('never lets unproven destinations take more than half the slots, nor failing ones more than a quarter', () => {
    const dead = Array.from({ length: 10 }, (_, i) => c(`dead${i}`, failing(1), 0, i));
    const plan = planAdmission(
      [...dead, c('new', fresh, 0, 50), c('healthy', proven(40, 0), 0, 100)],
      budget(20),
      100,
      cfg,
      none,
    );
    expect([...plan]).toEqual([
      ['dead0', 1],
      ['dead1', 1],
      ['dead2', 1],
      ['dead3', 1],
      ['dead4', 1],
      ['new', 2],
      ['healthy', 7],
    ]);
  });

  it('leaves a new destination the unproven slots that failing ones cannot take', () => {
    const plan = planAdmission(
      [c('dead', failing(2), 0, 1), c('new', fresh, 0, 50)],
      budget(40, 10, 10, 10),
      100,
      cfg,
      none,
    );
    expect([...plan]).toEqual([['new', 2]]);
  });
});

describe('planAdmission: callbacks waiting on an answer hold waiting places, not slots', () => {
  const withWaiting = (slots: number, places: number, waiting: number, sending = 0): Budget => ({
    ...budget(slots, sending, sending, sending),
    waitingPlaces: places,
    waiting,
  });

  it('admits beside callbacks that wait: a thousand dead destinations with two waiting each take no slot', () => {
    const dead = Array.from({ length: 1000 }, (_, i) => c(`dead${i}`, failing(1), 2, i, 2));
    const plan = planAdmission(
      [...dead, c('new', fresh, 0, 50), c('healthy', proven(40, 0), 0, 100)],
      withWaiting(20, 4000, 2000),
      100,
      cfg,
      none,
    );
    expect(plan.get('healthy')).toBe(9);
    expect(plan.get('new')).toBe(2);
    expect([...plan].filter(([key]) => key.startsWith('dead'))).toHaveLength(0);
  });

  it('counts a destination holding only waiting callbacks as holding none (it keeps its window)', () => {
    const dead = [c('dead', failing(1), 0, 1), c('slow', proven(40, 0), 30, 2, 30)];
    expect(planAdmission(dead, withWaiting(20, 160, 30), 100, cfg, none).get('slow')).toBe(10);
  });

  it('admits unproven destinations only while all theirs in flight fit the places but a slot each', () => {
    const candidates = [c('new', fresh, 0, 50), c('healthy', proven(40, 0), 0, 100)];
    // 100 places, 20 kept for the slots' overdue: 79 waiting leave the unproven one.
    expect(planAdmission(candidates, withWaiting(20, 100, 79), 100, cfg, none).get('new')).toBe(1);
    // 80 waiting: none for them, and the healthy destination still has the slots.
    const full = planAdmission(candidates, withWaiting(20, 100, 80), 100, cfg, none);
    expect([...full]).toEqual([['healthy', 10]]);
  });

  it('admits nothing once the slots and waiting places together are taken, however many slots are free', () => {
    const plan = planAdmission([c('healthy', proven(40, 0), 0, 100)], withWaiting(20, 160, 178), 100, cfg, none);
    expect([...plan]).toEqual([['healthy', 1]]);
    expect([...planAdmission([c('h', proven(40, 0), 0, 1)], withWaiting(20, 160, 180), 100, cfg, none)]).toEqual([]);
  });
});

describe('admissionRounds: a pass admits what destinations have, in rounds', () => {
  /** Runs the rounds against destinations holding `due` callbacks each; returns each round's plan. */
  function run(candidates: Candidate[], b: Budget, due: Record<string, number>): [string, number][][] {
    const plans: [string, number][][] = [];
    const rounds = admissionRounds(candidates, b, 100, cfg, none);
    for (let round = rounds.next(); !round.done;) {
      plans.push(sorted(round.value));
      const got = new Map([...round.value].map(([o, n]) => [o, Math.min(n, due[o])]));
      for (const [o, n] of got) due[o] -= n;
      round = rounds.next(got);
    }
    return plans;
  }

  it('gives the slots a destination could not use to the others in the next round', () => {
    const plans = run([c('a', proven(40, 0), 0, 1), c('b', proven(40, 0), 0, 2)], budget(24), { a: 1, b: 30 });
    expect(plans).toEqual([
      [
        ['a', 8],
        ['b', 8],
      ],
      [['b', 4]],
    ]);
  });

  it('ends after a round that left nobody short', () => {
    expect(run([c('a', proven(40, 0), 0, 1)], budget(200), { a: 100 })).toEqual([[['a', 40]]]);
  });

  it('runs at most ADMIT_ROUNDS statements, however many come up short', () => {
    const candidates = Array.from({ length: 10 }, (_, i) => c(`d${i}`, proven(40, 0), 0, i));
    const rounds = admissionRounds(candidates, budget(40), 100, cfg, none);
    let statements = 0;
    // Each round, one destination has one callback fewer than planned.
    for (let round = rounds.next(); !round.done; statements++) {
      const [first] = round.value.keys();
      round = rounds.next(new Map([...round.value].map(([o, n]) => [o, o === first ? n - 1 : n])));
    }
    expect(statements).toBe(ADMIT_ROUNDS);
  });
});

describe('admission is fair across passes: least recently served first', () => {
  it('serves the least recently served first (never served before all), whatever their oldest due', () => {
    const served: Served = new Map([
      ['a', 7],
      ['b', 2],
    ]);
    const candidates = [c('a', proven(40, 0), 0, 1), c('b', proven(40, 0), 0, 50), c('fresh', proven(40, 0), 0, 99)];
    expect(sorted(planAdmission(candidates, budget(2), 100, cfg, served))).toEqual([
      ['b', 1],
      ['fresh', 1],
    ]);
  });

  it('gives a newly active destination a slot in the next pass, beside a thousand backlogs older than it', () => {
    const backlogs = Array.from({ length: 1000 }, (_, i) => c(`dead${i}`, proven(40, 0), 0, i));
    const served: Served = new Map(backlogs.map((b, i) => [b.key, 1000 + i]));
    const plan = planAdmission([...backlogs, c('healthy', proven(40, 0), 0, 5000)], budget(10), 6000, cfg, served);
    expect(plan.get('healthy')).toBe(1);
  });

  it('forgets a destination that had nothing due, remembers when the others last had their turn', () => {
    const served: Served = new Map([
      ['idle', 3],
      ['waited', 4],
      ['got', 4],
    ]);
    const candidates = [
      c('waited', fresh, 0, 1),
      c('got', fresh, 0, 1),
      c('new', fresh, 0, 1),
      c('passed over', fresh, 0, 1),
    ];
    const next = servedAfter(
      served,
      candidates,
      new Map([
        ['got', 2],
        ['new', 1],
      ]),
      9,
    );
    expect(sorted(next)).toEqual([
      ['got', 9],
      ['new', 9],
      ['passed over', 9],
      ['waited', 4],
    ]);
    // A pass that gave no slot leaves the newly active as they were.
    expect(sorted(servedAfter(served, candidates, new Map(), 9))).toEqual([
      ['got', 4],
      ['waited', 4],
    ]);
  });

  it(
    'serves each of 100 backlogs within ceil(100 / free slots) passes (their share of them), ' +
      'and a light destination in the pass it has something due',
    () => {
      const backlogs = Array.from({ length: 100 }, (_, i) => c(`d${i}`, proven(40, 0), 0, i));
      let served: Served = new Map();
      const last = new Map<string, number>();
      let longest = 0;
      for (let pass = 1; pass <= 300; pass++) {
        // The light destination has a callback due one pass in three, fresher than every backlog's.
        const light = pass % 3 === 0 ? [c('light', proven(40, 0), 0, 1000 + pass)] : [];
        const candidates = [...backlogs, ...light];
        const plan = wholePass(candidates, budget(7), 2000, served, { light: 1 });
        if (light.length) expect(`pass ${pass}: light ${plan.get('light') ?? 0}`).toBe(`pass ${pass}: light 1`);
        for (const b of backlogs.filter((b) => plan.has(b.key))) {
          longest = Math.max(longest, pass - (last.get(b.key) ?? 0));
          last.set(b.key, pass);
        }
        served = servedAfter(served, candidates, plan, pass);
      }
      // The light one takes one of the 7 slots at most.
      expect(longest).toBeLessThanOrEqual(Math.ceil(100 / 6));
    },
  );
});

describe('fresh work before catch-up', () => {
  it(
    'admits a destination with a callback due just now beside a thousand catch-up backlogs ' +
      'served less recently than it',
    () => {
      const backlogs = Array.from({ length: 1000 }, (_, i) => c(`dead${i}`, proven(40, 0), 0, i));
      const served: Served = new Map([
        ...backlogs.map((b, i): [string, number] => [b.key, 1000 + i]),
        ['healthy', 2000],
      ]);
      const plan = wholePass([...backlogs, c('healthy', proven(40, 0), 0, 6000)], budget(10), 6000, served, {
        healthy: 3,
      });
      // All three it has, however many backlogs: the other slots go to those.
      expect(plan.get('healthy')).toBe(3);
      expect([...plan.values()].reduce((a, b) => a + b, 0)).toBe(10);
    },
  );

  it(
    'admits a light destination at every pass it has a callback due (faster than its equal share), ' +
      'and still serves each of 100 backlogs within a bound',
    () => {
      const backlogs = Array.from({ length: 100 }, (_, i) => c(`d${i}`, proven(40, 0), 0, -10_000 - i));
      let served: Served = new Map();
      const last = new Map<string, number>();
      let longest = 0;
      for (let pass = 1; pass <= 300; pass++) {
        const now = pass * 100; // a pass every 100 ms; the light one's callback became due just now
        const candidates = [...backlogs, c('light', proven(40, 0), 0, now)];
        const plan = wholePass(candidates, budget(7), now, served, { light: 1 });
        expect(`pass ${pass}: light ${plan.get('light') ?? 0}`).toBe(`pass ${pass}: light 1`);
        for (const b of backlogs.filter((b) => plan.has(b.key))) {
          longest = Math.max(longest, pass - (last.get(b.key) ?? 0));
          last.set(b.key, pass);
        }
        served = servedAfter(served, candidates, plan, pass);
      }
      // The light one takes one of the 7 slots each pass: the backlogs share the other 6 (one pass
      // more in the first round: the first pass's passed-over newly active tie with those it served).
      expect(last.size).toBe(100);
      expect(longest).toBeLessThanOrEqual(Math.ceil(100 / 6) + 1);
    },
  );

  it('does not prefer a destination whose oldest due became due FRESH_MS ago or more', () => {
    const now = 50_000;
    const served: Served = new Map([
      ['behind', 2],
      ['stale', 5],
      ['recent', 9],
    ]);
    const stale = [c('behind', proven(40, 0), 0, now - 5000), c('stale', proven(40, 0), 0, now - FRESH_MS)];
    expect([...planAdmission(stale, budget(1), now, cfg, served)]).toEqual([['behind', 1]]);
    // One a millisecond younger than the bound is still fresh, and goes first.
    const withRecent = [...stale, c('recent', proven(40, 0), 0, now - FRESH_MS + 1)];
    expect([...planAdmission(withRecent, budget(1), now, cfg, served)]).toEqual([['recent', 1]]);
  });
});
