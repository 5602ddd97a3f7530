/**
 * Model-based test of the delivery core (a unit test: no database): the pure window, admission
 * and settlement functions, driven through random histories (hundreds of runs a second) by an
 * in-memory model of what admission.ts (CANDIDATES, ADMIT, LAPSE, EXPIRE) and settlement.ts
 * (RECORD) do in PostgreSQL (test/support/delivery-model.ts), with the code's own constants and
 * job shape: the lease (LEASE_MARGIN_MS), jobs of up to JOB_CALLBACKS callbacks spread over the
 * live workers (jobsOf), each worker's slots, and a callback that waited for a slot until too
 * little lease was left not sent (LEASE_SPARE_MS). The statements themselves are driven through
 * random histories on PostgreSQL by delivery-statements.e2e-spec.ts. The random steps are drawn
 * from the events of the lifecycle table (src/callbacks/callback-lifecycle.ts, EVENT_STEPS), and
 * every change the model makes is checked to be one of that table's rows. FC_SEED=<seed> replays a
 * failure.
 */
import fc from 'fast-check';
import { failingSlots, isFresh, riskySlots } from '../src/delivery/admission-plan.js';
import { JOB_CALLBACKS } from '../src/delivery/callback-queue.js';
import { ADMITTED_WAITING_MS } from '../src/delivery/admission.js';
import { PATIENCE_MS, WAITING_PER_SLOT } from '../src/delivery/delivery-slots.js';
import { circuitOf, newDestination, PROVEN_FOR_MS, roomOf } from '../src/delivery/destination-window.js';
import { nextAttemptShown, nextProbeShown, probeReady } from '../src/callbacks/circuit-wait.js';
import { originOfKey } from '../src/callbacks/callback-destination.js';
import { CALLBACK_TRANSITIONS, LifeEvent, permits } from '../src/callbacks/callback-lifecycle.js';
import {
  Behaviour,
  BEHAVIOURS,
  Callback,
  Change,
  cfg,
  LEASE_MS,
  MAX_ATTEMPTS,
  DESTINATIONS,
  PassReport,
  Row,
  SCHEDULE,
  SCHEDULE_TOTAL,
  TIMEOUT_MS,
  World,
  answer,
} from './support/delivery-model.js';

// ---- steps ----
const k = <K extends string>(...ks: K[]) => fc.constantFrom(...ks);
/** Each step a random history can take, with how often. */
const STEPS = {
  commit: { weight: 4, arbitrary: fc.record({ k: k('commit'), d: fc.nat(3), b: fc.constant<Behaviour>('ok') }) },
  behave: { weight: 2, arbitrary: fc.record({ k: k('behave'), d: fc.nat(3), b: fc.constantFrom(...BEHAVIOURS) }) },
  pass: { weight: 4, arbitrary: fc.record({ k: k('pass') }) },
  // A pass whose jobs Redis refuses: what it admitted is released.
  refuse: { weight: 1, arbitrary: fc.record({ k: k('refuse') }) },
  sweep: { weight: 2, arbitrary: fc.record({ k: k('sweep') }) },
  // Random answers are retryable ones: 410 and refused come from behaviours (else schedules never run out).
  settle: {
    weight: 5,
    arbitrary: fc.record({
      k: k('settle'),
      pick: fc.nat(),
      as: fc.option(fc.constantFrom<Behaviour>('ok', '5xx', '429', 'hang', '4xx'), { freq: 4 }),
      late: fc.nat(50),
    }),
  },
  crash: { weight: 1, arbitrary: fc.record({ k: k('crash', 'restart'), w: fc.nat(1) }) },
  tick: {
    weight: 3,
    arbitrary: fc.record({
      k: k('tick'),
      ms: fc.oneof(
        fc.constant(10),
        fc.integer({ min: 100, max: 3000 }),
        fc.constantFrom(LEASE_MS + 1, SCHEDULE_TOTAL + 1, cfg.probe.last, PROVEN_FOR_MS, 3_600_000),
      ),
    }),
  },
  timers: { weight: 2, arbitrary: fc.record({ k: k('timers'), n: fc.integer({ min: 1, max: 8 }) }) },
  // A partner's or an operator's redelivery: of a failed callback (its repair after an outage), or of any.
  redeliver: { weight: 2, arbitrary: fc.record({ k: k('redeliver'), pick: fc.nat(), failed: fc.boolean() }) },
  promote: { weight: 1, arbitrary: fc.record({ k: k('promote'), pick: fc.nat() }) },
  // The partner moves a callback's URL to another destination, or removes it (a PATCH).
  move: { weight: 2, arbitrary: fc.record({ k: k('move'), pick: fc.nat(), d: fc.nat(3) }) },
  remove: { weight: 1, arbitrary: fc.record({ k: k('remove'), pick: fc.nat(), d: fc.nat(3) }) },
  prune: { weight: 1, arbitrary: fc.record({ k: k('prune') }) },
};
type StepName = keyof typeof STEPS;

/**
 * The steps that cause each event of the lifecycle table (src/callbacks/callback-lifecycle.ts):
 * a random history is drawn from the table's events, so an event the table gains has no step until
 * one is named here, and the test below fails.
 */
export const EVENT_STEPS: Record<LifeEvent, StepName[]> = {
  record: ['commit'],
  // A refused pass admits, then releases.
  admit: ['pass', 'timers', 'refuse'],
  release: ['refuse'],
  lapse: ['sweep', 'timers'],
  deliver: ['settle', 'tick', 'timers'],
  retry: ['settle', 'tick', 'timers'],
  // An attempt's last failure or final answer (tick and timers settle too), an outage outlasting the schedule, a removed URL.
  fail: ['settle', 'tick', 'timers', 'sweep', 'remove', 'refuse'],
  // An operator's Promote, or a probe's answer closing the circuit.
  'due now': ['promote', 'settle', 'tick', 'timers'],
  redeliver: ['redeliver'],
  'move URL': ['move'],
  'remove URL': ['remove'],
  prune: ['prune'],
};
/** The steps of the world around the callbacks, which cause no event of their own: answers change, workers crash, time passes. */
const WORLD_STEPS: StepName[] = ['behave', 'crash', 'tick'];
const tableSteps = [...new Set([...CALLBACK_TRANSITIONS.flatMap((t) => EVENT_STEPS[t.event] ?? []), ...WORLD_STEPS])];
const stepArb = fc.oneof(...tableSteps.map((name) => STEPS[name]));
type Step = typeof stepArb extends fc.Arbitrary<infer T> ? T : never;

/** Applies a step; returns the admission passes it ran. */
function apply(w: World, s: Step): PassReport[] {
  const origin = (d: number) => [...w.dests.keys()][d % w.dests.size];
  if (s.k === 'commit') w.commit(origin(s.d));
  if (s.k === 'behave') w.dests.get(origin(s.d))!.behaviour = s.b;
  if (s.k === 'sweep') w.sweep();
  if (s.k === 'crash') w.crash(s.w % w.workers.length);
  if (s.k === 'restart') w.restart(s.w % w.workers.length);
  if (s.k === 'tick') w.tick(s.ms);
  const started = w.started();
  if (s.k === 'settle' && started.length > 0) {
    const j = started[s.pick % started.length];
    w.settle(j, answer(s.as ?? w.dests.get(j.cb.dest)!.behaviour), Math.min(w.now, j.startedAt! + s.late));
  }
  const redeliverable = w.callbacks.filter((c) => (s.k === 'redeliver' && s.failed ? c.status === 'failed' : true));
  if (s.k === 'redeliver' && redeliverable.length > 0) w.redeliver(redeliverable[s.pick % redeliverable.length]);
  const movable = w.callbacks.filter((c) => c.status !== 'delivered');
  if (s.k === 'move' && movable.length > 0) w.move(movable[s.pick % movable.length], origin(s.d));
  if (s.k === 'remove' && movable.length > 0) w.remove(movable[s.pick % movable.length]);
  const pending = w.callbacks.filter((c) => c.status === 'pending');
  if (s.k === 'promote' && pending.length > 0) w.promote(pending[s.pick % pending.length]);
  if (s.k === 'prune') w.prune();
  // Redis refused the jobs: no pass a check could see (admission remembers nothing of it).
  if (s.k === 'refuse') w.refusedPass();
  if (s.k === 'timers') return Array.from({ length: s.n }, () => w.timer());
  return s.k === 'pass' ? [w.pass()] : [];
}

// ---- invariants: each throws with the evidence ----
type Check = (w: World, pass: PassReport | null) => void;
function check(ok: boolean, message: () => string): void {
  if (!ok) throw new Error(message());
}
const after = (r: Row) => r.sending + r.admitted;
/** In slots after the pass: what it admitted takes slots, the waiting places hold the rest (admission-plan.ts). */
const inSlots = (r: Row) => after(r) - r.waiting;
const show = (pass: PassReport) => JSON.stringify([...pass.rows].map(([o, r]) => [o, { ...r, state: undefined }]));

const eachCallbackHasOneConsistentState: Check = (w) => {
  for (const c of w.callbacks) {
    const settled = c.nextAttemptAt === null && c.leaseUntil === null;
    const ok = {
      pending: c.nextAttemptAt !== null && c.leaseUntil === null,
      sending: c.leaseUntil !== null,
      delivered: settled,
      failed: settled,
    }[c.status];
    check(
      ok === true && c.scheduleAttempts <= MAX_ATTEMPTS,
      () => `callback ${c.id} is ${c.status}: ${JSON.stringify(c)}`,
    );
  }
};

const jobsFitTheLiveWorkers: Check = (w) => {
  w.workers.forEach((wk, i) => {
    const mine = w.started().filter((j) => j.worker === i);
    const places = wk.slots * WAITING_PER_SLOT;
    // Those started PATIENCE_MS ago or more may wait in waiting places; the rest take slots.
    const waiting = Math.min(places, mine.filter((j) => w.now - j.startedAt! >= PATIENCE_MS).length);
    check(
      wk.up ? mine.length - waiting <= wk.slots : mine.length === 0,
      () =>
        `worker ${i} (${wk.up ? 'up' : 'down'}, ${wk.slots} slots, ${places} waiting places) sends ${mine.length} ` +
        `callbacks at once`,
    );
  });
  for (const j of w.jobs.values())
    check(j.cb.status === 'sending', () => `callback ${j.cb.id} held by a job, and ${j.cb.status}`);
  check(
    w.jobSizes.every((n) => n >= 1 && n <= JOB_CALLBACKS),
    () => `jobs of ${w.jobSizes.join(', ')} callbacks`,
  );
};

const inFlightWithinWindows: Check = (w, pass) => {
  for (const [origin, { state }] of w.dests) {
    const sending = w.of(origin, 'sending');
    const as = (k: Callback['admittedAs']) => sending.filter((c) => c.admittedAs === k).length;
    // The requests actually under way to it, whatever became of their rows since (a URL moved).
    const requests = [...w.jobs.values()].filter((j) => j.dest === origin);
    const sent = (k: Callback['admittedAs']) => requests.filter((j) => j.admittedAs === k).length;
    check(
      sending.length <= cfg.max && requests.length <= cfg.max,
      () => `${origin}: ${sending.length} sending, ${requests.length} requests, max ${cfg.max}`,
    );
    check(
      as('unproven') <= cfg.initial && sent('unproven') <= cfg.initial,
      () =>
        `${origin}: ${as('unproven')} in flight and ${sent('unproven')} requests admitted while unproven, initial window ${cfg.initial}`,
    );
    check(
      as('open') <= 1 && sent('open') <= 1,
      () =>
        `${origin}: ${as('open')} in flight and ${sent('open')} requests admitted while open (${JSON.stringify(state)})`,
    );
  }
  for (const [origin, r] of pass?.rows ?? []) {
    if (r.admitted === 0) continue;
    const s = r.state;
    if (s.openedAt !== null)
      check(
        r.admitted === 1 && r.sending === 0 && probeReady(s, pass!.now),
        () => `${origin} open: ${r.sending} sending, admitted ${r.admitted} at ${pass!.now} (${JSON.stringify(s)})`,
      );
    else
      check(
        after(r) <= Math.min(cfg.max, r.proven ? s.window : Math.min(s.window, cfg.initial)),
        () => `${origin}: ${after(r)} sending after a pass, window ${s.window}, proven ${r.proven}`,
      );
  }
};

/**
 * An open destination always has a wake-up (docs/architecture.md, invariant 9): its probe in flight; or
 * half-open, its probe due or asked for, so its next callback, fresh or redelivered, is the probe
 * (it has room for one the moment nothing is in flight); or open with a probe time still to come.
 * What is shown says so: the state (circuitOf) and the next probe, never a time already past, and
 * every callback it holds shows that probe as its next attempt.
 */
const openDestinationsHaveAWakeUp: Check = (w) => {
  for (const [origin, { state }] of w.dests) {
    if (state.openedAt === null) continue;
    const inFlight = w.of(origin, 'sending').length;
    const shown = circuitOf(state, inFlight, w.now);
    const what = () => `${origin} shown ${shown} at ${w.now}, ${inFlight} in flight (${JSON.stringify(state)})`;
    if (inFlight === 0 && shown === 'half_open')
      check(roomOf(state, 0, w.now, cfg) === 1, () => `half-open with no room for its probe: ${what()}`);
    if (shown === 'open')
      check(
        inFlight === 0 && state.nextProbeAt !== null && state.nextProbeAt > w.now,
        () => `open with no wake-up: ${what()}`,
      );
    check((nextProbeShown(state, w.now) ?? -Infinity) >= w.now, () => `next probe shown in the past: ${what()}`);
    for (const c of w.of(origin, 'pending'))
      check(
        (nextAttemptShown(c, state, w.now) ?? -Infinity) >= w.now,
        () => `callback ${c.id} held there shows a next attempt in the past: ${what()}`,
      );
  }
};

/** A manual redelivery is refused only for its URL removed (the model sends no test callback): never for an open circuit. */
const redeliveriesAreTaken: Check = (w) =>
  check(
    w.refusals.every((r) => / URL removed/.test(r)),
    () => `redeliveries refused: ${w.refusals.join('; ')}`,
  );

const unprovenWithinTheirShare: Check = (_w, pass) => {
  if (!pass) return;
  const rows = [...pass.rows.values()];
  const sum = (f: (r: Row) => number, unproven = false) =>
    rows.reduce((n, r) => n + (unproven && r.proven ? 0 : f(r)), 0);
  const share = riskySlots(pass.slots);
  if (sum((r) => r.admitted, true) > 0)
    check(
      sum(inSlots, true) <= share,
      () =>
        `unproven destinations: ${sum(inSlots, true)} in slots after a pass, share ${share} of ${pass.slots}; ${show(pass)}`,
    );
  const failing = rows.filter((r) => r.failing);
  const failingAfter = failing.reduce((n, r) => n + inSlots(r), 0);
  if (failing.some((r) => r.admitted > 0))
    check(
      failingAfter <= failingSlots(pass.slots),
      () =>
        `failing destinations: ${failingAfter} sending after a pass, share ${failingSlots(pass.slots)} of ${pass.slots}; ${show(pass)}`,
    );
  if (sum((r) => r.admitted) > 0) {
    check(
      sum(inSlots) <= pass.slots,
      () => `${sum(inSlots)} in slots after a pass, ${pass.slots} slots; ${show(pass)}`,
    );
    check(
      sum((r) => r.waiting) + sum(inSlots) <= pass.slots + pass.places,
      () => `${sum(after)} sending after a pass, ${pass.slots} slots and ${pass.places} waiting places; ${show(pass)}`,
    );
  }
};

const failuresHaveACause: Check = (w) => {
  for (const e of w.ends) {
    const what = () => `callback ${e.cb.id} ${e.status} by ${e.by}: ${JSON.stringify({ ...e, cb: undefined })}`;
    if (e.by === 'attempt' && e.final) check(e.status === 'failed', what); // 410 or refused: nothing to retry
    if (e.by === 'attempt' && !e.final) check(!e.probe && e.scheduleAttempts === MAX_ATTEMPTS, what); // a failed probe spends no schedule
    if (e.by === 'expire')
      check(
        e.open && /unavailable \(circuit open since .*attempt schedule ended while waiting/.test(e.lastError),
        what,
      );
    if (e.by === 'removed') check(/^callback URL removed by the partner/.test(e.lastError), what);
    check(e.attemptCount > 0 || e.open || e.by === 'removed', what); // a closed destination's callback fails only after an attempt
  }
  for (const c of w.callbacks)
    check(
      c.status !== 'failed' || w.ends.some((e) => e.cb === c && e.status === 'failed'),
      () => `callback ${c.id} failed with no cause`,
    );
};

/**
 * What a pass left: free slots and the shares, and whether a destination it left short had a
 * reason: no slot free, its share spent, or as many in flight as are left free (admission-plan.ts).
 */
function leftOver(pass: PassReport) {
  const rows = [...pass.rows.entries()];
  const waiting = rows.reduce((n, [, r]) => n + r.waiting, 0);
  const free = Math.min(
    pass.slots - rows.reduce((n, [, r]) => n + inSlots(r), 0),
    pass.slots + pass.places - waiting - rows.reduce((n, [, r]) => n + inSlots(r), 0),
  );
  const riskyFree = riskySlots(pass.slots) - rows.reduce((n, [, r]) => n + (r.proven ? 0 : inSlots(r)), 0);
  const failingFree = failingSlots(pass.slots) - rows.reduce((n, [, r]) => n + (r.failing ? inSlots(r) : 0), 0);
  const short = rows.filter(([, r]) => r.admitted < Math.min(r.due, r.room));
  const why = (o: string, r: Row) =>
    `${o} admitted ${r.admitted} of ${r.due} due (room ${r.room}, proven ${r.proven}, failing ${r.failing}) with ${free} slots free, ${riskyFree} of the unproven share, ${failingFree} of the failing one; ${show(pass)}`;
  // As the pass began: whether a destination could take a slot, had none gone to those served before it.
  const at = (f: (r: Row) => number) => rows.reduce((n, [, r]) => n + f(r), 0);
  const freeAtStart = Math.min(
    pass.slots - at((r) => r.sending - r.waiting),
    pass.slots + pass.places - at((r) => r.sending),
  );
  const riskyAtStart = riskySlots(pass.slots) - at((r) => (r.proven ? 0 : r.sending - r.waiting));
  const failingAtStart = failingSlots(pass.slots) - at((r) => (r.failing ? r.sending - r.waiting : 0));
  /** Whether it could take a slot when its turn came, had `before` taken one each (as the pass began: none). */
  const could = (r: Row, before: Row[] = []) =>
    r.due > 0 &&
    r.room > 0 &&
    r.sending - r.waiting < freeAtStart - before.length &&
    (r.proven || riskyAtStart - before.filter((x) => !x.proven).length > 0) &&
    (!r.failing || failingAtStart - before.filter((x) => x.failing).length > 0);
  return {
    rows,
    short,
    why,
    could,
    full: (r: Row) => inSlots(r) >= free || (!r.proven && riskyFree <= 0) || (r.failing && failingFree <= 0),
  };
}
/** The order a pass serves destinations in (admission-plan.ts): fresh before catch-up, then least recently served (never or idle first), then fewest in flight, then oldest due. */
const turn = (r: Row) => r.lastServed ?? -Infinity;
const holds = (r: Row) => r.sending - r.waiting;
const fresh = (r: Row, now: number) => isFresh(r.oldestDue!, now);
const servedBefore = (now: number) => (x: Row, r: Row) =>
  (fresh(x, now) && !fresh(r, now)) ||
  (fresh(x, now) === fresh(r, now) &&
    (turn(x) < turn(r) ||
      (turn(x) === turn(r) && (holds(x) < holds(r) || (holds(x) === holds(r) && x.oldestDue! <= r.oldestDue!)))));

/** Due + room ⇒ admitted within one pass, unless the slots (or its share) ran out on destinations served before it, or it holds as many as are left free. */
const dueWithRoomIsAdmitted: Check = (_w, pass) => {
  if (!pass) return;
  const { rows, short, why, full, could } = leftOver(pass);
  for (const [o, r] of short.filter(([, r]) => r.admitted === 0)) {
    check(full(r), () => why(o, r));
    // Those it competed with: for any slot if it is proven, for the unproven share if not, for the failing share if failing.
    const rivals = rows.filter(([, x]) => x.admitted > 0 && (r.proven || !x.proven) && (!r.failing || x.failing));
    // When its turn came, those served before it had taken a slot each at most: could it take one then?
    const before = rows.filter(([, x]) => x !== r && x.admitted > 0 && servedBefore(pass.now)(x, r)).map(([, x]) => x);
    if (!could(r, before)) continue;
    check(
      rivals.every(([, x]) => servedBefore(pass.now)(x, r)),
      () => `served out of order: ${why(o, r)}`,
    );
  }
};

/** A pass leaves no slot idle while a destination has due callbacks, room and its share, and holds fewer than are left free. */
const noSlotLeftIdle: Check = (_w, pass) => {
  if (!pass) return;
  const { short, why, full } = leftOver(pass);
  for (const [o, r] of short) check(full(r), () => why(o, r));
};

/**
 * Fair across passes, whatever the age of other destinations' backlogs: a destination that could
 * take a slot when a pass began (something due, room, fewer in flight than free slots, its shares
 * free) and got none waits at most a pass for each other destination, one more for each
 * destination newly active meanwhile (it had nothing due at the pass before, or never got a
 * slot): each of those goes before it once, then after it until it is served; and one more for
 * each of those passes in which another destination took a slot while fresh (fresh work goes first; one that
 * cannot keep up ages out of it within FRESH_MS). Kept per history, from the passes alone.
 */
function admittedWithinBoundedPasses(): Check {
  const waits = new Map<string, { passes: number; arrivals: number; freshPasses: number }>();
  let known = new Set<string>(); // got a slot, and has had something due at every pass since
  return (_w, pass) => {
    if (!pass) return;
    const { rows, could } = leftOver(pass);
    const arrived = rows.filter(([o, r]) => r.admitted > 0 && !known.has(o)).map(([o]) => o);
    for (const [o, r] of rows) {
      if (pass.skipped.has(o)) continue; // catching up, and not read by this pass: readInTurn bounds how long
      if (r.due === 0 || r.admitted > 0) {
        waits.delete(o);
        continue;
      }
      const wait = waits.get(o) ?? { passes: 0, arrivals: 0, freshPasses: 0 };
      wait.arrivals += arrived.filter((x) => x !== o).length;
      if (could(r)) wait.passes++;
      if (could(r) && rows.some(([x, y]) => x !== o && y.admitted > 0 && fresh(y, pass.now))) wait.freshPasses++;
      waits.set(o, wait);
      const bound = rows.length - 1 + wait.arrivals + wait.freshPasses;
      check(
        wait.passes <= bound,
        () =>
          `${o} could take a slot at ${wait.passes} passes and got none (bound ${bound}: ${rows.length} destinations, ${wait.arrivals} newly active meanwhile, ${wait.freshPasses} passes with fresh ones served); ${show(pass)}`,
      );
    }
    known = new Set(
      rows.filter(([o, r]) => r.admitted > 0 || (known.has(o) && (r.due > 0 || pass.skipped.has(o)))).map(([o]) => o),
    );
  };
}

/**
 * A destination catching up that a pass leaves unread (src/delivery/catch-up.ts) is read again
 * within as many passes as there are destinations: each pass reads those read least recently.
 */
function readInTurn(): Check {
  const skipped = new Map<string, number>();
  return (_w, pass) => {
    if (!pass) return;
    for (const o of pass.rows.keys()) {
      const n = pass.skipped.has(o) ? (skipped.get(o) ?? 0) + 1 : 0;
      skipped.set(o, n);
      check(n < pass.rows.size, () => `${o} left unread by ${n} passes in a row; ${show(pass)}`);
    }
  };
}

/** Each world's callbacks' statuses as last checked. */
const lastSeen = new WeakMap<World, Map<number, Callback['status']>>();

/** Every change of a callback's status is one the lifecycle table permits (src/callbacks/callback-lifecycle.ts). */
const statusChangesAreTransitions: Check = (w) => {
  const before = lastSeen.get(w) ?? new Map<number, Callback['status']>();
  for (const c of w.callbacks)
    check(
      permits(before.get(c.id) ?? null, c.status),
      () => `callback ${c.id} went from ${before.get(c.id) ?? 'no row'} to ${c.status}: ${JSON.stringify(c)}`,
    );
  const now = new Set(w.callbacks.map((c) => c.id));
  for (const [id, from] of before)
    check(
      now.has(id) || permits(from, null),
      () => `callback ${id} was deleted from ${from}: no transition of callback-lifecycle.ts`,
    );
  lastSeen.set(w, new Map(w.callbacks.map((c) => [c.id, c.status])));
};

/** Whether a change is a row of the lifecycle table: its event, from one of the row's states, to one of them (or as it was). */
export const isTableRow = (ch: Change) =>
  CALLBACK_TRANSITIONS.some(
    (t) =>
      t.event === ch.event && t.from.includes(ch.from) && (t.to === 'same' ? ch.to === ch.from : t.to.includes(ch.to)),
  );

/** How many of each world's changes were checked. */
const changesSeen = new WeakMap<World, number>();

/** Every change the model made is a row of the lifecycle table, by its event: not only a change of status the table permits. */
const changesAreTableRows: Check = (w) => {
  for (const ch of w.changes.slice(changesSeen.get(w) ?? 0))
    check(
      isTableRow(ch),
      () =>
        `callback ${ch.id}: ${ch.event} from ${ch.from ?? 'no row'} to ${ch.to ?? 'no row'} is no row of callback-lifecycle.ts`,
    );
  changesSeen.set(w, w.changes.length);
};

/** A destination that has never answered opens at its first timeout (destination-window.ts, failuresAfter). */
const silenceOpensTheNeverAnswered: Check = (w) => {
  const closed = w.firstSilences.filter((s) => !s.open);
  check(closed.length === 0, () => `a first timeout left ${closed.map((s) => s.dest).join(', ')} closed`);
};

const SAFETY: Check[] = [
  eachCallbackHasOneConsistentState,
  jobsFitTheLiveWorkers,
  inFlightWithinWindows,
  unprovenWithinTheirShare,
  failuresHaveACause,
  openDestinationsHaveAWakeUp,
  redeliveriesAreTaken,
  silenceOpensTheNeverAnswered,
];
/** A random history's checks: it sees every step from the first, so each change of status too. */
const TRACED: Check[] = [...SAFETY, statusChangesAreTransitions, changesAreTableRows];

/** Every destination answers 2xx, crashed workers restart, timers and settlements drive admission until nothing waits. */
function drain(w: World, checks: Check[]): void {
  for (const d of w.dests.values()) d.behaviour = 'ok';
  w.workers.forEach((_, i) => w.restart(i));
  for (let round = 0; round < 500 && w.busy(); round++) {
    w.sweep();
    const pass = w.pass();
    for (const c of checks) c(w, pass);
    const answered = w.started();
    for (const j of answered) w.settle(j, answer('ok'), j.startedAt!);
    for (const c of checks) c(w, null);
    w.now = answered.length > 0 ? w.now + 10 : w.nextEvent(); // a settlement wakes admission at once (settlement.ts)
  }
  const left = w.callbacks.filter((c) => c.status === 'pending' || c.status === 'sending');
  check(
    left.length === 0,
    () => `still waiting after 500 rounds: ${JSON.stringify(left)} ${JSON.stringify([...w.dests])}`,
  );
}

const worldArb = fc.record({
  destinations: fc.integer({ min: 1, max: 4 }),
  workers: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 2 }),
  seed: fc.integer({ min: 1, max: 0x7ffffffe }),
  steps: fc.array(stepArb, { minLength: 1, maxLength: 150, size: 'max' }),
});
type Spec = typeof worldArb extends fc.Arbitrary<infer T> ? T : never;

/** Histories where partners move and remove URLs often, while attempts are under way and circuits open. */
const movingWorldArb = fc.record({
  destinations: fc.integer({ min: 2, max: 4 }),
  workers: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 2 }),
  seed: fc.integer({ min: 1, max: 0x7ffffffe }),
  steps: fc.array(
    fc.oneof(
      { weight: 4, arbitrary: fc.record({ k: k('commit'), d: fc.nat(3), b: fc.constant<Behaviour>('ok') }) },
      {
        weight: 2,
        arbitrary: fc.record({
          k: k('behave'),
          d: fc.nat(3),
          b: fc.constantFrom<Behaviour>('ok', '5xx', '429', 'hang'),
        }),
      },
      { weight: 4, arbitrary: fc.record({ k: k('pass') }) },
      {
        weight: 3,
        arbitrary: fc.record({
          k: k('settle'),
          pick: fc.nat(),
          as: fc.option(fc.constantFrom<Behaviour>('ok', '5xx', 'hang'), { freq: 4 }),
          late: fc.nat(50),
        }),
      },
      { weight: 1, arbitrary: fc.record({ k: k('timers'), n: fc.integer({ min: 1, max: 3 }) }) },
      { weight: 4, arbitrary: fc.record({ k: k('move', 'move', 'remove'), pick: fc.nat(), d: fc.nat(3) }) },
    ),
    { minLength: 1, maxLength: 80 },
  ),
});
const PARAMS = { numRuns: 200, seed: Number(process.env.FC_SEED ?? 20_260_101) };

function run(spec: Spec, checks: Check[]): World {
  const w = new World(spec.destinations, spec.workers, spec.seed);
  for (const s of spec.steps) for (const pass of [...apply(w, s), null]) for (const c of checks) c(w, pass);
  return w;
}

describe('delivery core against an in-memory model of admission and settlement', () => {
  it("draws its random steps from the lifecycle table's events: each event has steps that cause it, and every step is an event's or the world's", () => {
    const events = [...new Set(CALLBACK_TRANSITIONS.map((t) => t.event))].sort();
    expect(Object.keys(EVENT_STEPS).sort()).toEqual(events);
    expect(events.filter((e) => (EVENT_STEPS[e] ?? []).length === 0)).toEqual([]);
    expect(Object.keys(STEPS).filter((n) => !tableSteps.includes(n as StepName))).toEqual([]);
  });

  it('makes every event of the lifecycle table in its random histories, each by a step named for it, and each change a row of the table', () => {
    const made = new Map<LifeEvent, Set<string>>();
    fc.assert(
      fc.property(worldArb, (spec) => {
        const w = new World(spec.destinations, spec.workers, spec.seed);
        for (const s of spec.steps) {
          const from = w.changes.length;
          for (const pass of [...apply(w, s), null]) for (const c of TRACED) c(w, pass);
          for (const ch of w.changes.slice(from))
            made.set(ch.event, (made.get(ch.event) ?? new Set()).add(s.k === 'restart' ? 'crash' : s.k));
        }
      }),
      { ...PARAMS, numRuns: 100 },
    );
    const events = [...new Set(CALLBACK_TRANSITIONS.map((t) => t.event))];
    expect(events.filter((e) => !made.has(e))).toEqual([]);
    // A step made an event only if it is named for it: the mapping says what the model does.
    expect(
      [...made].flatMap(([e, steps]) =>
        [...steps].filter((st) => !EVENT_STEPS[e].includes(st as StepName)).map((st) => `${st} made ${e}`),
      ),
    ).toEqual([]);
  });

  it('keeps each callback in one state, in-flight within windows, workers and the unproven and failing shares, fails callbacks only for a cause, and gives every open destination a wake-up', () => {
    fc.assert(
      fc.property(worldArb, (spec) => void run(spec, TRACED)),
      PARAMS,
    );
  });

  it('keeps windows and the one probe of an open circuit while partners move and remove the URLs of callbacks in flight', () => {
    // Cheap histories, so many: a move must land on a callback in flight to a destination at its window.
    fc.assert(
      fc.property(movingWorldArb, (spec) => void run(spec, TRACED)),
      { ...PARAMS, numRuns: 2000 },
    );
  });

  it('delivers everything once destinations answer: what failed did so after attempts, an outage or its URL removed, and a redelivery delivers the others', () => {
    const property = fc.property(worldArb, (spec) => {
      const w = run(spec, TRACED);
      drain(w, TRACED);
      w.callbacks.filter((c) => c.status === 'failed').forEach((c) => w.redeliver(c));
      for (const c of TRACED) c(w, null);
      drain(w, TRACED);
      const undelivered = w.callbacks.filter((c) => c.status !== 'delivered' && !(c.removed && c.status === 'failed'));
      check(undelivered.length === 0, () => `not delivered after a redelivery: ${JSON.stringify(undelivered)}`);
    });
    fc.assert(property, PARAMS);
  });

  it('admits, in one pass, a due callback of every destination with room while slots are free, fresh first, then least recently served', () => {
    fc.assert(
      fc.property(worldArb, (spec) => drain(run(spec, [dueWithRoomIsAdmitted]), [dueWithRoomIsAdmitted])),
      PARAMS,
    );
  });

  it("admits a destination that could take a slot within a bounded number of passes, whatever the age of the others' backlogs", () => {
    fc.assert(
      fc.property(worldArb, (spec) => {
        const checks = [admittedWithinBoundedPasses(), readInTurn()];
        drain(run(spec, checks), checks);
      }),
      PARAMS,
    );
  });

  it('leaves no slot idle in a pass while a destination has due callbacks, room, and fewer in flight than are left free', () => {
    fc.assert(
      fc.property(worldArb, (spec) => drain(run(spec, [noSlotLeftIdle]), [noSlotLeftIdle])),
      PARAMS,
    );
  });

  const timers = (w: World, seconds: number, b: Behaviour = 'ok') => {
    for (let s = 0; s < seconds; s++) {
      const pass = w.timer(b);
      for (const c of SAFETY) c(w, pass);
    }
  };

  it('delivers callbacks stranded by a crashed worker once their lease lapses, none failed without an attempt', () => {
    const w = new World(1, [4]);
    const a = DESTINATIONS[0];
    for (let i = 0; i < 3; i++) w.commit(a);
    w.pass();
    expect(w.of(a, 'sending')).toHaveLength(2);
    w.crash(0);
    w.restart(0);
    timers(w, LEASE_MS / 1000 - 1);
    expect([w.of(a, 'sending').length, w.of(a, 'pending').length]).toEqual([2, 1]);
    timers(w, 5);
    expect(w.callbacks.map((c) => [c.status, c.attemptCount])).toEqual([
      ['delivered', 1],
      ['delivered', 1],
      ['delivered', 1],
    ]);
    expect(w.ends).toEqual([]);
  });

  it('fails callbacks waiting on an open circuit once their schedule ends, naming the outage; a redelivery after recovery delivers them', () => {
    const w = new World(1, [4]);
    const a = DESTINATIONS[0];
    for (let i = 0; i < 3; i++) w.commit(a);
    timers(w, 3, '5xx');
    expect(w.dests.get(a)!.state.openedAt).not.toBeNull();
    w.commit(a);
    timers(w, SCHEDULE_TOTAL / 1000 + 2, '5xx');
    expect(
      w.callbacks.every(
        (c) => c.status === 'failed' && /unavailable \(circuit open since .*last error: HTTP 503/.test(c.lastError!),
      ),
    ).toBe(true);
    expect(w.ends.every((e) => e.by === 'expire' && e.open)).toBe(true);
    w.callbacks.forEach((c) => w.redeliver(c));
    timers(w, cfg.probe.last / 1000 + 2);
    expect(w.callbacks.map((c) => c.status)).toEqual(['delivered', 'delivered', 'delivered', 'delivered']);
  });

  /** A destination whose circuit opened and whose callbacks then ran out of schedule: open, nothing waiting, its probe due. */
  const openWithNothingWaiting = () => {
    const w = new World(1, [4]);
    const a = DESTINATIONS[0];
    for (let i = 0; i < 3; i++) w.commit(a);
    timers(w, 3, '5xx');
    timers(w, SCHEDULE_TOTAL / 1000 + cfg.probe.last / 1000 + 2, '5xx');
    return { w, a, d: w.dests.get(a)! };
  };

  it('shows an open destination with nothing waiting as half-open: a redelivery of a failed callback goes at once as its probe and closes it', () => {
    const { w, a, d } = openWithNothingWaiting();
    expect(w.callbacks.map((c) => c.status)).toEqual(['failed', 'failed', 'failed']);
    expect(circuitOf(d.state, 0, w.now)).toBe('half_open');
    d.behaviour = 'ok';
    const [first] = w.callbacks;
    expect(w.redeliver(first)).toBe(true);
    expect(w.pass().rows.get(a)!.admitted).toBe(1);
    expect(first.status).toBe('sending');
    w.settle(w.jobs.get(first.id)!, answer('ok'), w.now);
    expect([first.status, d.state.openedAt, d.probe]).toEqual(['delivered', null, null]);
  });

  it('sends each redelivery to a destination still down as the next probe, one at a time: never a burst, the automatic interval still doubling', () => {
    const { w, a, d } = openWithNothingWaiting();
    const requests = () => w.callbacks.reduce((n, c) => n + c.attemptCount, 0);
    const before = requests();
    for (const c of w.callbacks) {
      w.tick(10);
      expect(w.redeliver(c)).toBe(true);
      const probeMs = d.state.probeMs;
      expect(w.pass().rows.get(a)!.admitted).toBe(1);
      expect(d.probe).toBeNull(); // the request is answered by the probe admitted
      expect(w.pass().rows.get(a)!.admitted).toBe(0); // one in flight at a time
      w.settle(w.jobs.get(c.id)!, answer('5xx'), w.now);
      expect(d.state).toMatchObject({
        probeMs: Math.min(cfg.probe.last, probeMs * 2),
        nextProbeAt: w.now + Math.min(cfg.probe.last, probeMs * 2),
      });
      expect(w.pass().rows.get(a)!.admitted).toBe(0); // nothing more until the next redelivery or the probe's time
    }
    expect(requests() - before).toBe(3);
    // Two redeliveries during a probe in flight: one request, as soon as it settles, not at the doubled interval.
    const [x, y, z] = w.callbacks;
    w.redeliver(x);
    w.pass();
    w.redeliver(y);
    w.redeliver(z);
    expect(w.pass().rows.get(a)!.admitted).toBe(0);
    w.settle(w.jobs.get(x.id)!, answer('5xx'), w.now);
    expect(d.state.nextProbeAt).toBeGreaterThan(w.now);
    expect(w.pass().rows.get(a)!.admitted).toBe(1);
    expect(z.status).toBe('sending');
    expect(w.pass().rows.get(a)!.admitted).toBe(0);
  });

  it("keeps two partners' destinations at one origin apart: one's failures open its circuit only, the other's callbacks go at once", () => {
    const w = new World(2, [4]);
    const [mine, theirs] = DESTINATIONS;
    expect(originOfKey(mine)).toBe(originOfKey(theirs));
    w.dests.get(theirs)!.behaviour = '5xx';
    for (let i = 0; i < 3; i++) [mine, theirs].forEach((d) => w.commit(d));
    for (let s = 0; s < 3; s++) for (const c of SAFETY) c(w, w.timer());
    expect(w.dests.get(theirs)!.state.openedAt).not.toBeNull();
    expect(w.dests.get(mine)!.state).toMatchObject({ openedAt: null, failures: 0, lastError: null });
    expect(w.of(mine, 'delivered')).toHaveLength(3);
    expect(w.ends.filter((e) => e.cb.dest === mine)).toEqual([]);
  });

  it('packs a pass into jobs over the live workers; a worker short of slots sends its callbacks in turn, and one left too little lease is sent after it lapses', () => {
    const w = new World(3, [1, 5]);
    const [a, b, c] = DESTINATIONS;
    for (const o of [a, b, c]) w.dests.get(o)!.state = { ...newDestination(cfg), window: cfg.max, lastOkAt: w.now };
    for (let i = 0; i < 2; i++) [a, b, c].forEach((o) => w.commit(o));
    w.pass(); // five of six: c's second would hold as many as are left free
    expect(w.jobSizes).toEqual([3, 2]);
    const held = (i: number) => [...w.jobs.values()].filter((j) => j.worker === i);
    expect([held(0).length, w.started().filter((j) => j.worker === 0).length]).toEqual([3, 1]);
    w.tick(TIMEOUT_MS); // the first answers; the second starts
    w.tick(TIMEOUT_MS); // the second answers; the third has 10 s of lease left, less than an attempt and its record
    expect(held(0)).toEqual([]);
    const skipped = w.callbacks.filter((c) => c.status === 'sending');
    expect(skipped.map((c) => c.attemptCount)).toEqual([0]);
    w.tick(LEASE_MS - 2 * TIMEOUT_MS + 1);
    w.timer();
    expect(w.callbacks.map((c) => [c.status, c.attemptCount])).toEqual(
      Array.from({ length: 6 }, () => ['delivered', 1]),
    );
  });

  it("keeps a callback moved while in flight in its old destination's window until it settles; its retry goes to the new one", () => {
    const w = new World(2, [6]);
    const [a, b] = DESTINATIONS;
    for (let i = 0; i < 3; i++) w.commit(a);
    w.pass();
    expect(w.of(a, 'sending')).toHaveLength(cfg.initial);
    const [moved] = w.of(a, 'sending');
    w.move(moved, b);
    const pass = w.pass();
    for (const c of SAFETY) c(w, pass);
    expect(pass.rows.get(a)!.admitted).toBe(0); // its window is still full: the moved one counts there
    expect([...w.jobs.values()].filter((j) => j.dest === a)).toHaveLength(cfg.initial);
    w.settle(w.jobs.get(moved.id)!, answer('5xx'), w.now);
    expect(moved).toMatchObject({ status: 'pending', dest: b, nextDest: null });
    w.tick(SCHEDULE[0] * 2);
    w.timer();
    expect(moved.status).toBe('delivered');
  });

  it('reserves no slots for callbacks a destination does not have: the other destination takes them in the same pass', () => {
    const w = new World(2, [6]);
    const [a, b] = DESTINATIONS;
    for (const o of [a, b]) w.dests.get(o)!.state = { ...newDestination(cfg), window: cfg.max, lastOkAt: w.now };
    w.commit(a);
    for (let i = 0; i < cfg.max; i++) w.commit(b);
    const pass = w.pass();
    // Planned two each; a had one: b takes its slot in the next round, up to holding as many as are left free.
    expect([a, b].map((o) => pass.rows.get(o)!.admitted)).toEqual([1, 3]);
  });

  it('admits no unproven destination while the unproven share is overdrawn (a proven window in flight aged past PROVEN_FOR_MS)', () => {
    const w = new World(3, [6]);
    const [a, b, c] = DESTINATIONS;
    w.dests.get(a)!.state = { ...newDestination(cfg), window: cfg.max, lastOkAt: w.now - PROVEN_FOR_MS + 100 };
    for (let i = 0; i < cfg.max; i++) w.commit(a);
    w.pass();
    // Four in flight to a destination no longer proven, admitted too recently to wait in waiting places
    // (ADMITTED_WAITING_MS): over the share of three.
    w.tick(ADMITTED_WAITING_MS - 100);
    [b, c].forEach((o) => w.commit(o));
    const pass = w.pass();
    expect([b, c].map((o) => pass.rows.get(o)!.admitted)).toEqual([0, 0]);
  });
});
