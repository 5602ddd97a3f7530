/**
 * The delivery core's statements themselves, driven through random histories on PostgreSQL: the
 * real admission pass (CANDIDATES, ADMIT, RELEASE when Redis refuses), sweep (LAPSE, EXPIRE),
 * record (settlement's RECORD and destination writes), the recorder's INSERT, the operators'
 * redelivery and Promote and retention's prune, imported from the code, on a scratch database
 * (test/support/statement-world.ts). The steps are drawn from the events of
 * src/callbacks/callback-lifecycle.ts, and every change of a callback's status they see is one of
 * it. Fewer runs than test/delivery-model.spec.ts, which checks the same invariants on a model
 * hundreds of times a second. FC_SEED=<seed> replays a failure.
 */
import fc from 'fast-check';
import { CALLBACK_TRANSITIONS, permits } from '../src/callbacks/callback-lifecycle.js';
import type { CallbackStatus } from '../src/callbacks/callback-status.js';
import { riskySlots } from '../src/delivery/admission-plan.js';
import { stateOf } from '../src/delivery/destination-store.js';
import { circuitOf, INITIAL_WINDOW, isProven } from '../src/delivery/destination-window.js';
import { nextAttemptShown, nextProbeShown } from '../src/callbacks/circuit-wait.js';
import {
  apply,
  check,
  Checks,
  drain,
  EVENT_STEPS,
  Step,
  stepArb,
  STEPS,
  tableSteps,
} from './support/statement-steps.js';
import type { Behaviour } from './support/delivery-model.js';
import {
  CallbackRow,
  LEASE_MS,
  MAX_ATTEMPTS,
  ORIGINS,
  READY_WINDOW,
  RETENTION_MS,
  SCHEDULE,
  SCHEDULE_TOTAL,
  WINDOW_MAX,
  World,
} from './support/statement-world.js';
import { statementSuite } from './support/statement-suite.js';

/** Each world's callbacks' statuses as last seen: every change since must be one the lifecycle table permits. */
const seen = new WeakMap<World, Map<string, CallbackStatus>>();

function transitions(w: World, rows: { id: string; status: string }[]): void {
  const before = seen.get(w) ?? new Map<string, CallbackStatus>();
  const now = new Map(rows.map((c) => [c.id, c.status as CallbackStatus]));
  for (const [id, to] of now)
    check(
      permits(before.get(id) ?? null, to),
      () => `callback ${id} went from ${before.get(id) ?? 'no row'} to ${to}: no transition of callback-lifecycle.ts`,
    );
  for (const [id, from] of before)
    check(
      now.has(id) || permits(from, null),
      () => `callback ${id} was deleted from ${from}: no transition of callback-lifecycle.ts`,
    );
  seen.set(w, now);
}

/** What holds after every step, read from the tables. */
async function safety(w: World): Promise<void> {
  const rows = await w.callbacks();
  for (const c of rows) {
    const settled = c.next_attempt_at === null && c.lease_until === null;
    const ok = {
      pending: c.next_attempt_at !== null && c.lease_until === null,
      sending: c.lease_until !== null,
      delivered: settled && c.delivered_at !== null,
      failed: settled,
    }[c.status];
    check(
      ok === true && c.schedule_attempts <= MAX_ATTEMPTS,
      () => `callback in an inconsistent state: ${JSON.stringify(c)}`,
    );
    // A callback fails after attempts, after its destination's outage outlasted its schedule, or with its URL removed.
    const cause =
      /unavailable \(circuit open since .*attempt schedule ended while waiting|^callback URL removed by the partner/;
    check(
      c.status !== 'failed' || c.attempt_count > 0 || cause.test(c.last_error ?? ''),
      () => `failed with no cause: ${JSON.stringify(c)}`,
    );
  }
  for (const o of w.keys) {
    const sending = rows.filter((c) => c.destination === o && c.status === 'sending').length;
    const requests = w.entries.filter((e) => e.dest === o).length;
    check(
      sending <= WINDOW_MAX && requests <= WINDOW_MAX,
      () => `${o}: ${sending} sending, ${requests} requests, at most ${WINDOW_MAX}`,
    );
  }
  for (const e of w.entries)
    check(
      rows.some((c) => c.id === e.id),
      () => `a job holds ${e.id}, which is no callback`,
    );
  await openDestinationsHaveAWakeUp(w, rows);
}

/**
 * An open destination always has a wake-up (docs/architecture.md, invariant 9), read from the tables: its
 * probe in flight, or half-open (its probe due or asked for: its next callback is the probe), or
 * open with a probe time still to come; never a next probe or a held callback's next attempt
 * already past.
 */
async function openDestinationsHaveAWakeUp(w: World, rows: CallbackRow[]): Promise<void> {
  for (const d of (await w.destinations()).filter((x) => x.opened_at !== null)) {
    const s = stateOf(d);
    const sending = rows.filter((c) => c.destination === d.key && c.status === 'sending').length;
    const shown = circuitOf(s, sending, d.now);
    const what = () => `${d.key} shown ${shown}, ${sending} in flight: ${JSON.stringify(d)}`;
    if (shown === 'open')
      check(
        sending === 0 && d.next_probe_at !== null && d.next_probe_at > d.now,
        () => `open with no wake-up: ${what()}`,
      );
    check((nextProbeShown(s, d.now) ?? -Infinity) >= d.now, () => `next probe shown in the past: ${what()}`);
    for (const c of rows.filter((x) => x.destination === d.key && x.status === 'pending')) {
      const next = nextAttemptShown(
        { status: c.status, nextAttemptAt: c.next_attempt_at?.getTime() ?? null },
        s,
        d.now,
      );
      check(
        (next ?? -Infinity) >= d.now,
        () => `callback ${c.id} held there shows a next attempt in the past: ${what()}`,
      );
    }
  }
}

/** What a pass that admitted must leave: within the slots, the unproven share, each destination's room; each job with its callbacks' lease. */
async function afterPass(w: World, admitted: string[]): Promise<void> {
  if (admitted.length === 0) return;
  // A job whose lease is not its callback's leaves the callback alone (callback-delivery.ts): it would wait for its lease to lapse.
  const leases = await w.leases(admitted);
  for (const id of admitted)
    check(
      w.entries.filter((e) => e.id === id).at(-1)?.lease === leases.get(id),
      () =>
        `callback ${id} admitted with lease ${leases.get(id)}, its job carries ${w.entries.filter((e) => e.id === id).at(-1)?.lease}`,
    );
  const rows = await w.callbacks();
  const dests = await w.destinations();
  const slots = Math.min(
    READY_WINDOW,
    w.workers.reduce((n, x) => n + (x.up ? x.slots : 0), 0),
  );
  const sending = (o: string) => rows.filter((c) => c.destination === o && c.status === 'sending').length;
  const total = w.keys.reduce((n, o) => n + sending(o), 0);
  check(total <= slots, () => `${total} sending after a pass, ${slots} slots`);
  const unproven = dests.filter((d) => !isProven(stateOf(d), d.now));
  const admittedTo = (o: string) => rows.filter((c) => c.destination === o && admitted.includes(c.id)).length;
  if (unproven.some((d) => admittedTo(d.key) > 0)) {
    const n = unproven.reduce((k, d) => k + sending(d.key), 0);
    check(
      n <= riskySlots(slots),
      () => `unproven destinations: ${n} sending after a pass, share ${riskySlots(slots)} of ${slots}`,
    );
  }
  // The requests under way to each destination, whatever became of their rows (a URL moved).
  const requests = (o: string) => w.entries.filter((e) => e.dest === o).length;
  for (const d of dests.filter((x) => x.opened_at !== null && admittedTo(x.key) > 0)) {
    check(
      admittedTo(d.key) === 1 && sending(d.key) === 1 && requests(d.key) === 1,
      () => `open ${d.key}: admitted ${admittedTo(d.key)}, ${sending(d.key)} sending, ${requests(d.key)} requests`,
    );
  }
  for (const d of dests.filter((x) => !isProven(stateOf(x), x.now) && admittedTo(x.key) > 0)) {
    const window = Math.min(stateOf(d).window, INITIAL_WINDOW);
    check(requests(d.key) <= window, () => `unproven ${d.key}: ${requests(d.key)} requests, window ${window}`);
  }
}

const checks: Checks = { admitted: afterPass, settled: safety };
/** The checks of a random history, which sees every step from the first: each change of status too. */
const traced: Checks = {
  admitted: async (w, admitted) => {
    transitions(w, await w.callbacks());
    await afterPass(w, admitted);
  },
  settled: async (w) => {
    transitions(w, await w.callbacks());
    await safety(w);
  },
};

describe('the delivery statements on PostgreSQL, through random histories', () => {
  const suite = statementSuite();

  const worldArb = fc.record({
    destinations: fc.integer({ min: 1, max: 3 }),
    workers: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 2 }),
    steps: fc.array(stepArb, { minLength: 1, maxLength: 40 }),
  });

  it("draws its random steps from the lifecycle table's events: each event has steps that make it, and every step is an event's or the world's", () => {
    const events = [...new Set(CALLBACK_TRANSITIONS.map((t) => t.event))].sort();
    expect(Object.keys(EVENT_STEPS).sort()).toEqual(events);
    expect(events.filter((e) => (EVENT_STEPS[e] ?? []).length === 0)).toEqual([]);
    expect(Object.keys(STEPS).filter((n) => !tableSteps().includes(n as keyof typeof STEPS))).toEqual([]);
  });

  /** A history's steps, checked after each; then every destination answers, what failed is redelivered, and all is delivered. */
  async function history(w: World, steps: Step[]): Promise<void> {
    for (const step of steps) {
      await apply(w, step, traced);
      await traced.settled(w);
    }
    await drain(w, traced);
    await w.redeliverFailed();
    await traced.settled(w);
    await drain(w, traced);
    // Those whose URL the partner removed stay failed: nowhere to send them.
    const left = (await w.callbacks()).filter(
      (c) => c.status !== 'delivered' && !(c.status === 'failed' && /^callback URL removed/.test(c.last_error ?? '')),
    );
    check(left.length === 0, () => `not delivered after a redelivery: ${JSON.stringify(left)}`);
  }

  /**
   * Around an outage: the destinations at one origin are open and answer as their behaviour says
   * (5xx at first, now and then back up or hanging); their callbacks wait, run out of schedule or
   * lose their URL, and are redelivered.
   */
  const outageArb = fc.record({
    workers: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 2 }),
    steps: fc.array(
      fc.oneof(
        { weight: 3, arbitrary: STEPS.commit.arbitrary },
        { weight: 4, arbitrary: STEPS.admission.arbitrary },
        {
          weight: 4,
          arbitrary: fc.record({
            k: fc.constant('settle' as const),
            pick: fc.nat(),
            as: fc.constant<Behaviour | null>(null),
            late: fc.nat(50),
          }),
        },
        { weight: 3, arbitrary: STEPS.tick.arbitrary },
        { weight: 2, arbitrary: STEPS.redeliver.arbitrary },
        { weight: 1, arbitrary: STEPS.url.arbitrary },
        {
          weight: 1,
          arbitrary: fc.record({
            k: fc.constant('behave' as const),
            d: fc.nat(5),
            b: fc.constantFrom<Behaviour>('5xx', 'hang', 'ok'),
          }),
        },
      ),
      { minLength: 10, maxLength: 50 },
    ),
  });

  it('gives every open destination a wake-up through an outage whose callbacks run out of schedule, lose their URL and are redelivered', async () => {
    const property = fc.asyncProperty(outageArb, async (spec) => {
      const w = await suite.world(1, spec.workers);
      for (const key of w.keys) w.behaviour.set(key, '5xx');
      // Both partners' destinations there open, their probe due, nothing waiting yet.
      for (const company of [0, 1]) await w.openCircuit(ORIGINS[0], company);
      await history(w, spec.steps);
    });
    await fc.assert(property, {
      interruptAfterTimeLimit: 100_000,
      numRuns: Number(process.env.FC_RUNS ?? 15),
      seed: Number(process.env.FC_SEED ?? 20_261_207),
    });
  }, 140_000);

  it('keeps every callback in one consistent state and in-flight within windows, slots and the unproven share; fails only for a cause; delivers everything once destinations answer, and a redelivery delivers what failed; every open destination has a wake-up', async () => {
    const property = fc.asyncProperty(worldArb, async (spec) => {
      const w = await suite.world(spec.destinations, spec.workers);
      await history(w, spec.steps);
      // Retention deletes what was delivered, once it is old enough, and nothing else.
      const states = async () => (await w.callbacks()).map((c) => `${c.id} ${c.status}`).join(', ');
      const kept = (await w.callbacks())
        .filter((c) => c.status !== 'delivered')
        .map((c) => `${c.id} ${c.status}`)
        .join(', ');
      await w.tick(RETENTION_MS + 1);
      await w.prune();
      await traced.settled(w);
      const after = await states();
      check(after === kept, () => `retention left ${after}, not ${kept}`);
    });
    await fc.assert(property, {
      interruptAfterTimeLimit: 200_000,
      numRuns: Number(process.env.FC_RUNS ?? 25),
      seed: Number(process.env.FC_SEED ?? 20_261_125),
    });
  }, 240_000);

  const fresh = (destinations: number, workers: number[]) => suite.world(destinations, workers);
  const statuses = async (w: World) => (await w.callbacks()).map((c) => [c.status, c.attempt_count]);

  it("returns a crashed worker's callbacks once their lease lapses (LAPSE), not before, and delivers them spending no attempt", async () => {
    const w = await fresh(1, [4]);
    for (let i = 0; i < 3; i++) await w.commit(ORIGINS[0]);
    expect(await w.pass()).toHaveLength(1); // a new destination's initial window
    await w.crash(0);
    await w.restart(0);
    await w.tick(LEASE_MS - 1000);
    await w.sweep();
    expect(await statuses(w)).toEqual([
      ['sending', 0],
      ['pending', 0],
      ['pending', 0],
    ]);
    await w.tick(2000);
    await w.sweep();
    expect(await statuses(w)).toEqual([
      ['pending', 0],
      ['pending', 0],
      ['pending', 0],
    ]);
    await drain(w, checks);
    expect(await statuses(w)).toEqual([
      ['delivered', 1],
      ['delivered', 1],
      ['delivered', 1],
    ]);
  });

  it('gives each job the lease its callbacks hold when a pass admits in rounds, and they are sent at once', async () => {
    const w = await fresh(2, [6]);
    const [a, b] = ORIGINS;
    await w.commit(a);
    for (let i = 0; i < 6; i++) await w.commit(b);
    await suite.s.pool.query(`UPDATE destinations SET window_size = $1, last_ok_at = now()`, [WINDOW_MAX]);
    // Two each planned; a has one, so b takes another in a second round, a statement (and a lease) of its own.
    const admitted = await w.pass();
    expect(admitted).toHaveLength(4);
    await afterPass(w, admitted);
    for (const e of [...w.entries]) await w.settle(e, 'ok');
    expect((await w.callbacks()).filter((c) => c.status === 'delivered')).toHaveLength(4);
  });

  it('fails the callbacks waiting on an open circuit once their schedule ends (EXPIRE), naming the outage; a redelivery goes at once as the probe, one at a time, and a bulk one closes it', async () => {
    const w = await fresh(1, [4]);
    w.behaviour.set(w.keyOf(ORIGINS[0]), '5xx');
    for (let i = 0; i < 3; i++) await w.commit(ORIGINS[0]);
    for (let i = 0; i < 5 && (await w.destinations())[0].opened_at === null; i++) {
      await w.pass();
      for (const e of [...w.entries]) await w.settle(e, null);
      await w.tick(SCHEDULE[0] * 1.3);
    }
    expect((await w.destinations())[0].opened_at).not.toBeNull();
    await w.commit(ORIGINS[0]);
    await w.tick(SCHEDULE_TOTAL + 1000);
    await w.sweep();
    const rows = await w.callbacks();
    expect(rows.map((c) => c.status)).toEqual(['failed', 'failed', 'failed', 'failed']);
    expect(
      rows.every((c) =>
        /^destination https:\/\/a\.test unavailable \(circuit open since .*, last error: HTTP 503\); attempt schedule ended while waiting$/.test(
          c.last_error!,
        ),
      ),
    ).toBe(true);
    // One redelivered while the circuit is open: it goes at once as the probe (ADMIT takes it first, CLEAR_ASKS ends the request).
    const [first, second] = rows;
    await w.redeliver(second.id);
    expect((await w.destinations())[0].probe_id).toBe(second.id);
    expect(await w.pass()).toEqual([second.id]);
    expect((await w.destinations())[0].probe_id).toBeNull();
    // Redelivered during that probe: it waits its turn, and goes as soon as the probe fails, not at the doubled interval.
    await w.redeliver(first.id);
    expect(await w.pass()).toEqual([]);
    await w.settle(w.entries[0], '5xx');
    const d = (await w.destinations())[0];
    expect(d.next_probe_at! - d.now).toBeGreaterThan(500);
    expect(await w.pass()).toEqual([first.id]);
    await w.settle(w.entries[0], '5xx');
    expect(await w.pass()).toEqual([]);
    // In bulk, the oldest of an open destination's goes as its probe: the circuit closes, and the rest follow.
    expect(await w.redeliverFailed()).toBe(2);
    expect((await w.destinations())[0].probe_id).toBe(rows[2].id);
    await drain(w, checks);
    expect((await w.callbacks()).map((c) => c.status)).toEqual(['delivered', 'delivered', 'delivered', 'delivered']);
    expect((await w.destinations())[0]).toMatchObject({ opened_at: null, probe_id: null });
  });

  it("keeps callbacks moved while in flight in their old destination's window (MOVE, ADMIT, RECORD): no request beyond it, and no second probe of an open circuit", async () => {
    const w = await fresh(2, [6]);
    const [a, b] = [w.keyOf(ORIGINS[0]), w.keyOf(ORIGINS[1])]; // partner 0's destinations (companies 0 and 2 are its)
    await w.commit(ORIGINS[0], 0);
    await w.commit(ORIGINS[0], 2);
    expect(await w.pass()).toHaveLength(INITIAL_WINDOW); // a.test is new: its window is the initial one (1)
    await w.moveUrl(0, ORIGINS[1]); // company 0's callback in flight to a.test moves to b.test
    expect(await w.pass()).toEqual([]); // a.test's window is still full: its request is under way
    expect(w.entries.filter((e) => e.dest === a)).toHaveLength(INITIAL_WINDOW);
    const rows = await w.callbacks();
    expect(rows.map((c) => [c.destination, c.status])).toEqual([
      [a, 'sending'],
      [a, 'pending'],
    ]);
    // It settles (a 503), and only then moves: its retry goes to b.test.
    for (const e of [...w.entries]) await w.settle(e, '5xx');
    expect((await w.callbacks()).map((c) => [c.destination, c.status])).toEqual([
      [b, 'pending'],
      [a, 'pending'],
    ]);
    await drain(w, checks);

    // An open circuit's probe moved away leaves the circuit with its one probe in flight.
    const o = await fresh(2, [6]);
    await o.commit(ORIGINS[0], 0);
    await o.commit(ORIGINS[0], 2);
    await o.openCircuit(ORIGINS[0], 0);
    expect(await o.pass()).toHaveLength(1); // the probe
    await o.moveUrl(0, ORIGINS[1]); // the probe's company moves: company 2's callback still waits at a.test
    await afterPass(o, await o.pass());
    expect(o.entries.filter((e) => e.dest === a)).toHaveLength(1);
  });
});
