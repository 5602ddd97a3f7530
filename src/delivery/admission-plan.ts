import { DestinationState, isFailing, isProven, roomOf, WindowConfig } from './destination-window.js';

/** A destination with due pending callbacks, as one admission pass reads it. */
export interface Candidate {
  /** The destination's key. */
  key: string;
  state: DestinationState;
  /** Its callbacks in flight (`sending`), all processes together. */
  sending: number;
  /** Of those, the ones waiting on an answer in waiting places (Budget): they hold no slot. */
  waiting: number;
  /** Its oldest due callback's next_attempt_at (ms): among destinations served as recently, the oldest first. */
  oldestDue: number;
}

/**
 * The pass (a number counting the leader's passes) at which each destination last had its turn,
 * as admission remembers it between passes. A destination absent from it is newly active: it never
 * had a turn, or went idle (had nothing due at a pass) since, and counts as the least recently served.
 */
export type Served = ReadonlyMap<string, number>;

/**
 * The served-state after a pass numbered `pass`: the destinations it admitted callbacks of had
 * their turn at `pass`, and so did the newly active ones it passed over while it gave slots to
 * others (a thousand destinations back at once take their first turns in order, not all before
 * one that arrives after them); the other candidates keep theirs, and so do the destinations the
 * pass left `unread` (catch-up.ts); a destination read and not a candidate (nothing due) is
 * forgotten. Its size is the candidates' and the unread ones', whatever came before.
 */
export function servedAfter(
  served: Served,
  candidates: Candidate[],
  admitted: ReadonlyMap<string, number>,
  pass: number,
  unread: ReadonlySet<string> = new Set(),
): Map<string, number> {
  const gave = [...admitted.values()].some((n) => n > 0);
  const next = new Map<string, number>();
  for (const key of unread) if (served.has(key)) next.set(key, served.get(key)!);
  for (const { key } of candidates) {
    const last = (admitted.get(key) ?? 0) > 0 ? pass : (served.get(key) ?? (gave ? pass : undefined));
    if (last !== undefined) next.set(key, last);
  }
  return next;
}

/**
 * The delivery slots of every live worker and how many are taken, and their waiting places: a
 * callback admitted long enough ago that its request waits on an answer (delivery-slots.ts) has
 * left its slot for a waiting place, and takes no slot from anyone.
 */
export interface Budget {
  /** min(CALLBACK_READY_WINDOW, the live workers' CALLBACK_CONCURRENCY summed). */
  slots: number;
  /** Callbacks in flight in slots (admitted recently). */
  sending: number;
  /** Of those, to destinations that are not proven (new, idle, failing, open). */
  riskySending: number;
  /** Of those, to failing destinations (failed attempts in a row, or open). */
  failingSending: number;
  /** The live workers' waiting places (WAITING_PER_SLOT for each of their slots). */
  waitingPlaces: number;
  /** Callbacks in flight admitted long enough ago to wait in them. */
  waiting: number;
}

/**
 * The budget once `admitted` (callbacks by destination) are in flight too: each counts where its
 * destination does (admissionRounds keeps the same account between its rounds).
 */
export function spentAfter(
  budget: Budget,
  candidates: Candidate[],
  admitted: ReadonlyMap<string, number>,
  now: number,
): Budget {
  const spent = { ...budget };
  for (const c of candidates) {
    const n = admitted.get(c.key) ?? 0;
    spent.sending += n;
    if (!isProven(c.state, now)) spent.riskySending += n;
    if (isFailing(c.state)) spent.failingSending += n;
  }
  return spent;
}

/**
 * Destinations that are not proven (new, idle, failing, open: their requests may hang until the
 * timeout) share at most half the slots, so they can never take the last free ones from
 * healthy destinations.
 */
export const riskySlots = (slots: number): number => Math.max(1, Math.floor(slots / 2));
/**
 * Of that half, failing ones (whose requests did hang or fail) share at most half, so a
 * destination merely new or idle still finds slots among the unproven while hundreds fail.
 */
export const failingSlots = (slots: number): number => Math.max(1, Math.floor(slots / 4));

/**
 * The waiting places callbacks of destinations that are not proven may hold, all of theirs in
 * flight counted (those still in slots move there within PATIENCE_MS): the places but a slot's
 * worth each, which a proven destination's slow requests may take (delivery-slots.ts moves any
 * request past its patience). So every hanging request finds a place, and none keeps a slot that
 * admission counts as free: were they to overflow into the slots, a healthy destination's
 * callbacks would queue behind them in the worker.
 */
export const riskyWaitingPlaces = (budget: Budget): number => Math.max(0, budget.waitingPlaces - budget.slots);

/**
 * How long after its oldest due callback became due a destination's work is fresh (ms, both on
 * PostgreSQL's clock). Long enough to cover a few passes and the settlement between them (a
 * destination served every pass stays fresh), short enough that one that falls behind (a
 * recovering backlog, a partner sending faster than its slots) drops out within a second.
 */
export const FRESH_MS = 1000;
/** Whether a destination's oldest due callback became due less than FRESH_MS before `now`. */
export const isFresh = (oldestDue: number, now: number): boolean => now - oldestDue < FRESH_MS;

/**
 * How many callbacks of each destination one pass admits: one at a time round the fresh ones
 * (isFresh) up to their room, then round all, catch-up after fresh; within each, the least recently served first
 * (`served`: never or idle counts as least recent), then fewest in flight, then oldest due, each
 * up to its room, within the free slots, unproven and failing destinations within their shares.
 * Fresh first: with equal turns a healthy destination changing ten times a second gets its share
 * of a thousand backlogs' rate (under 2/s) and falls minutes behind; fresh callbacks must never
 * wait behind a catch-up. Least recently served, not oldest due, within a class: a sort by due
 * time gives the free slots to the oldest backlogs. Still bounded: a destination that cannot keep
 * up ages out of the fresh class within FRESH_MS, so fresh work takes only the slots of what
 * arrives and is drained at once; a catch-up destination waits at most a pass for each
 * destination served before it, and one for each pass whose slots fresh ones took.
 * A destination takes a slot only while it holds fewer than are left free (its in flight, with
 * what this pass gives it): slots held for seconds by slow or hanging requests are freed all at
 * once, and until then the last free ones stay with destinations holding fewer, whose callbacks
 * would otherwise wait for them.
 */
export function planAdmission(
  candidates: Candidate[],
  budget: Budget,
  now: number,
  cfg: WindowConfig,
  served: Served,
): Map<string, number> {
  const plan = new Map<string, number>();
  // A callback takes a slot now and a waiting place if it waits: both must be left.
  let free = Math.min(
    budget.slots - budget.sending,
    budget.slots + budget.waitingPlaces - budget.sending - budget.waiting,
  );
  // Below zero when callbacks in flight already exceed a share (a proven window aged, slots shrank).
  let riskyFree = riskySlots(budget.slots) - budget.riskySending;
  let failingFree = failingSlots(budget.slots) - budget.failingSending;
  let riskyPlaces = riskyWaitingPlaces(budget) - budget.waiting - budget.riskySending;
  const open = candidates
    .map((c) => ({
      key: c.key,
      proven: isProven(c.state, now),
      failing: isFailing(c.state),
      room: roomOf(c.state, c.sending, now, cfg),
      holds: c.sending - c.waiting,
      oldestDue: c.oldestDue,
      catchUp: isFresh(c.oldestDue, now) ? 0 : 1,
      turn: served.get(c.key) ?? -Infinity,
    }))
    .sort((a, b) => a.catchUp - b.catchUp || a.turn - b.turn || a.holds - b.holds || a.oldestDue - b.oldestDue);
  const may = (c: (typeof open)[number]) =>
    c.room > 0 && c.holds < free && (c.proven || (riskyFree > 0 && riskyPlaces > 0)) && (!c.failing || failingFree > 0);
  /** One slot at a time round `order` until none of them may take one. */
  const round = (order: typeof open) => {
    while ((order = order.filter(may)).length > 0) {
      for (const c of order) {
        if (!may(c)) continue;
        plan.set(c.key, (plan.get(c.key) ?? 0) + 1);
        c.room--;
        c.holds++;
        free--;
        if (!c.proven) {
          riskyFree--;
          riskyPlaces--;
        }
        if (c.failing) failingFree--;
      }
    }
  };
  // Fresh ones up to their room first (a slot a pass each, beside a hundred backlogs, leaves a
  // destination changing ten times a second behind), then everyone in order.
  round(open.filter((c) => c.catchUp === 0));
  round(open);
  return plan;
}

/** ADMIT statements one pass runs at most (each a round of admissionRounds). */
export const ADMIT_ROUNDS = 4;

/**
 * One pass's plans, in rounds: a pass reads only each destination's oldest due callback, not how
 * many it has, so a plan may give a destination more than it has due. The admission statement
 * takes what there is; a destination that came up short has nothing more due, and the slots it
 * left go to the others in the next round. Yields each round's plan and takes back how many
 * callbacks of each destination it admitted; ends when a round left nobody short, planned
 * nothing, or after ADMIT_ROUNDS (the next pass goes on).
 */
export function* admissionRounds(
  candidates: Candidate[],
  budget: Budget,
  now: number,
  cfg: WindowConfig,
  served: Served,
): Generator<Map<string, number>, void, Map<string, number>> {
  let spent = budget;
  let left = candidates.map((c) => ({ ...c }));
  for (let round = 0; round < ADMIT_ROUNDS; round++) {
    const plan = planAdmission(left, spent, now, cfg, served);
    if (plan.size === 0) return;
    const admitted = yield plan;
    const took = new Map<string, number>();
    const short = new Set<string>();
    for (const c of left) {
      const planned = plan.get(c.key) ?? 0;
      const n = Math.min(planned, admitted.get(c.key) ?? 0);
      c.sending += n;
      took.set(c.key, n);
      if (n < planned) short.add(c.key);
    }
    spent = spentAfter(spent, left, took, now);
    if (short.size === 0) return;
    left = left.filter((c) => !short.has(c.key));
  }
}
