import { ADMIT_ROUNDS, admissionRounds, Budget, Candidate, planAdmission } from './admission-plan.js';
import { DestinationState, newDestination, WindowConfig } from './destination-window.js';

const cfg: WindowConfig = { initial: 2, max: 40, threshold: 3, probe: { first: 1000, last: 8000 } };
const fresh = newDestination(cfg);
const proven = (window: number, at = 0): DestinationState => ({ ...fresh, window, lastOkAt: at });
const failing = (failures: number): DestinationState => ({ ...fresh, window: 1, failures, lastError: 'timeout' });
const c = (key: string, state: DestinationState, sending: number, oldestDue: number): Candidate => ({ key, state, sending, oldestDue });
const budget = (slots: number, sending = 0, riskySending = 0, failingSending = 0): Budget => ({ slots, sending, riskySending, failingSending });
const sorted = (plan: Map<string, number>) => [...plan].sort();

describe('planAdmission: the slots of one pass', () => {
  it('admits nothing when the slots are taken', () => {
    expect([...planAdmission([c('a', proven(40, 0), 0, 10)], budget(20, 20), 100, cfg)]).toEqual([]);
  });

  it('shares scarce slots one at a time, fewest in flight first, then oldest due', () => {
    const plan = planAdmission([c('b', proven(40, 0), 0, 20), c('x', proven(40, 0), 0, 5)], budget(12), 100, cfg);
    expect(sorted(plan)).toEqual([['b', 4], ['x', 4]]);
  });

  it('gives each destination up to its room when slots are plenty', () => {
    const plan = planAdmission([c('b', proven(40, 0), 0, 20), c('a', proven(40, 0), 35, 10)], budget(200, 35), 100, cfg);
    expect(sorted(plan)).toEqual([['a', 5], ['b', 40]]);
  });

  it('gives no slot to a destination holding as many as are left free: the last ones stay for those holding fewer', () => {
    // Three slow destinations hold 40 each; of 150 slots, 30 are free.
    const slow = ['s1', 's2', 's3'].map((o) => c(o, proven(40, 0), 40, 1));
    const plan = planAdmission([...slow, c('healthy', proven(40, 0), 0, 100)], budget(150, 120), 100, cfg);
    expect(sorted(plan)).toEqual([['healthy', 15]]);
    // Holding 20 each of 150, they grow until each holds as many as are left free: 37 stay free.
    const busy = ['s1', 's2', 's3'].map((o) => c(o, proven(40, 0), 20, 1));
    expect(sorted(planAdmission(busy, budget(150, 60), 100, cfg))).toEqual([['s1', 18], ['s2', 18], ['s3', 17]]);
  });

  it('admits no unproven callback while their share is overdrawn', () => {
    const plan = planAdmission([c('new', fresh, 0, 10), c('b', proven(40, 0), 0, 20)], budget(10, 6, 6), 100, cfg);
    expect([...plan]).toEqual([['b', 2]]);
  });

  it('never lets unproven destinations take more than half the slots, nor failing ones more than a quarter', () => {
    const dead = Array.from({ length: 10 }, (_, i) => c(`dead${i}`, failing(1), 0, i));
    const plan = planAdmission([...dead, c('new', fresh, 0, 50), c('healthy', proven(40, 0), 0, 100)], budget(20), 100, cfg);
    expect([...plan]).toEqual([['dead0', 1], ['dead1', 1], ['dead2', 1], ['dead3', 1], ['dead4', 1], ['new', 2], ['healthy', 7]]);
  });

  it('leaves a new destination the unproven slots that failing ones cannot take', () => {
    const plan = planAdmission([c('dead', failing(2), 0, 1), c('new', fresh, 0, 50)], budget(40, 10, 10, 10), 100, cfg);
    expect([...plan]).toEqual([['new', 2]]);
  });
});

describe('admissionRounds: a pass admits what destinations have, in rounds', () => {
  /** Runs the rounds against destinations holding `due` callbacks each; returns each round's plan. */
  function run(candidates: Candidate[], b: Budget, due: Record<string, number>): [string, number][][] {
    const plans: [string, number][][] = [];
    const rounds = admissionRounds(candidates, b, 100, cfg);
    for (let round = rounds.next(); !round.done; ) {
      plans.push(sorted(round.value));
      const got = new Map([...round.value].map(([o, n]) => [o, Math.min(n, due[o])]));
      for (const [o, n] of got) due[o] -= n;
      round = rounds.next(got);
    }
    return plans;
  }

  it('gives the slots a destination could not use to the others in the next round', () => {
    const plans = run([c('a', proven(40, 0), 0, 1), c('b', proven(40, 0), 0, 2)], budget(24), { a: 1, b: 30 });
    expect(plans).toEqual([[['a', 8], ['b', 8]], [['b', 4]]]);
  });

  it('ends after a round that left nobody short', () => {
    expect(run([c('a', proven(40, 0), 0, 1)], budget(200), { a: 100 })).toEqual([[['a', 40]]]);
  });

  it('runs at most ADMIT_ROUNDS statements, however many come up short', () => {
    const candidates = Array.from({ length: 10 }, (_, i) => c(`d${i}`, proven(40, 0), 0, i));
    const rounds = admissionRounds(candidates, budget(40), 100, cfg);
    let statements = 0;
    // Each round, one destination has one callback fewer than planned.
    for (let round = rounds.next(); !round.done; statements++) {
      const [first] = round.value.keys();
      round = rounds.next(new Map([...round.value].map(([o, n]) => [o, o === first ? n - 1 : n])));
    }
    expect(statements).toBe(ADMIT_ROUNDS);
  });
});
