import { DomainError, ErrorCode } from '../platform/index.js';
import { CallbackStatus, shownStatus } from './callback-status.js';

/** The condition, in SQL over `callbacks`, of a callback any redelivery may restart. */
export const REDELIVERABLE = `url_removed_at IS NULL AND NOT test`;

/** What decides one callback's redelivery, read under its lock (store/repairs.ts). */
export interface RedeliveryFacts {
  status: CallbackStatus;
  test: boolean;
  urlRemovedAt: Date | null;
  /** Its URL's origin, for the message. */
  origin: string;
  /** Its destination's circuit: open (or its probe in flight) since, null while closed. */
  openedAt: Date | null;
  nextProbeAt: Date | null;
}

/**
 * What redelivering a callback does, by its status: a settled one (`delivered`, `failed`) is sent
 * again on a fresh schedule; a `pending` one is due now, its schedule going on from there (the
 * partner fixed its receiver and need not wait for the next retry); one being attempted right now
 * (`sending`, shown as pending) is left to that attempt.
 */
export type RedeliveryMove = 'fresh_schedule' | 'due_now' | 'under_way';

const MOVES: Record<CallbackStatus, RedeliveryMove> = {
  delivered: 'fresh_schedule',
  failed: 'fresh_schedule',
  pending: 'due_now',
  sending: 'under_way',
};

/**
 * The one redelivery rule, for a partner's, an operator's and the dashboard's Retry: the move a
 * callback's redelivery makes, or why it is refused (409). A test callback gets its one attempt
 * only (send a new one); one whose URL the partner removed has nowhere to go; while its
 * destination's circuit is open nothing can be attempted there before the next probe, so the
 * refusal names that time rather than accept a redelivery that would only wait.
 */
export function redeliveryOf(c: RedeliveryFacts, now: Date): RedeliveryMove | DomainError {
  const status = shownStatus(c.status);
  if (c.test) {
    return new DomainError('conflict', ErrorCode.test_callback_not_redeliverable, `A test callback cannot be redelivered: it gets one attempt; send a new one (POST /v1/callbacks/test) (current status: ${status})`);
  }
  if (c.urlRemovedAt) {
    return new DomainError('conflict', ErrorCode.callback_url_removed, `Callback cannot be redelivered: its callback URL was removed at ${c.urlRemovedAt.toISOString()} (current status: ${status})`);
  }
  if (c.openedAt) {
    // A probe whose time has passed is being sent (admission takes it within a second), or is in flight.
    const probe = !c.nextProbeAt ? 'its probe is under way' : c.nextProbeAt > now ? `its next probe is at ${c.nextProbeAt.toISOString()}` : `its probe is under way (due since ${c.nextProbeAt.toISOString()})`;
    return new DomainError('conflict', ErrorCode.destination_open, `Callback cannot be redelivered now: its destination ${c.origin} is open (circuit open since ${c.openedAt.toISOString()}); ${probe}, redeliver after it (current status: ${status})`);
  }
  return MOVES[c.status];
}
