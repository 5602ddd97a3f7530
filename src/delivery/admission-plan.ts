import { DestinationState, isProven, roomOf, WindowConfig } from './destination-window.js';

/** A destination with due pending callbacks, as one admission pass reads it. */
export interface Candidate {
  origin: string;
  state: DestinationState;
  /** Its callbacks in flight (`sending`), all processes together. */
  sending: number;
  /** Its oldest due callback's next_attempt_at (ms): destinations are served oldest first. */
  oldestDue: number;
}

/** The delivery slots of every live worker, and how many are taken. */
export interface Budget {
  /** min(CALLBACK_READY_WINDOW, the live workers' CALLBACK_CONCURRENCY summed). */
  slots: number;
  sending: number;
  /** Of those, to destinations that are not proven (new, failing, open). */
  riskySending: number;
}

/**
 * Destinations that are not proven (new, failing, open: their requests may hang until the
 * timeout) share at most half the slots, so they can never take the last free ones from
 * healthy destinations.
 */
export const riskySlots = (slots: number): number => Math.max(1, Math.floor(slots / 2));

/**
 * How many callbacks of each destination one pass admits: one at a time round the destinations,
 * fewest in flight first, then oldest due (max-min fair: a destination with nothing in flight is
 * served before one adding to its many), each up to its room, within the free slots, unproven
 * destinations within their share.
 */
export function planAdmission(candidates: Candidate[], budget: Budget, now: number, cfg: WindowConfig): Map<string, number> {
  const plan = new Map<string, number>();
  let free = budget.slots - budget.sending;
  let riskyFree = riskySlots(budget.slots) - budget.riskySending;
  let open = candidates
    .map((c) => ({ origin: c.origin, proven: isProven(c.state, now), room: roomOf(c.state, c.sending, now, cfg), sending: c.sending, oldestDue: c.oldestDue }))
    .filter((c) => c.room > 0)
    .sort((a, b) => a.sending - b.sending || a.oldestDue - b.oldestDue);
  while (free > 0 && open.length > 0) {
    for (const c of open) {
      if (free === 0) break;
      // Below zero when unproven callbacks in flight already exceed the share (a proven window aged, slots shrank).
      if (!c.proven && riskyFree <= 0) continue;
      plan.set(c.origin, (plan.get(c.origin) ?? 0) + 1);
      c.room--;
      free--;
      if (!c.proven) riskyFree--;
    }
    open = open.filter((c) => c.room > 0 && (c.proven || riskyFree > 0));
  }
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
export function* admissionRounds(candidates: Candidate[], budget: Budget, now: number, cfg: WindowConfig): Generator<Map<string, number>, void, Map<string, number>> {
  const spent = { ...budget };
  let left = candidates.map((c) => ({ ...c }));
  for (let round = 0; round < ADMIT_ROUNDS; round++) {
    const plan = planAdmission(left, spent, now, cfg);
    if (plan.size === 0) return;
    const admitted = yield plan;
    const short = new Set<string>();
    for (const c of left) {
      const planned = plan.get(c.origin) ?? 0;
      const n = Math.min(planned, admitted.get(c.origin) ?? 0);
      c.sending += n;
      spent.sending += n;
      if (!isProven(c.state, now)) spent.riskySending += n;
      if (n < planned) short.add(c.origin);
    }
    if (short.size === 0) return;
    left = left.filter((c) => !short.has(c.origin));
  }
}
