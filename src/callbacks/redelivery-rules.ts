import { DomainError, ErrorCode } from '../platform/index.js';
import { CallbackStatus, shownStatus } from './callback-status.js';

/** The condition, in SQL over `callbacks`, of a callback any redelivery may restart. */
export const REDELIVERABLE = `url_removed_at IS NULL AND NOT test`;

/**
 * The condition, in SQL over `destinations d`, of a destination whose next probe a redelivery
 * brings forward: its circuit is open. There, the redelivered callback (in bulk: one of them per
 * destination) is asked to go as the next probe (destinations.probe_id), as soon as no probe is in
 * flight: sent now, or right after the one in flight settles, never later than the automatic
 * probe. One probe at a time whatever the number of redeliveries; a failed probe still doubles the
 * automatic interval (delivery/destination-window.ts).
 */
export const BRINGS_PROBE_FORWARD = `d.opened_at IS NOT NULL`;

/** What decides one callback's redelivery, read under its lock (store/repairs.ts). */
export interface RedeliveryFacts {
  status: CallbackStatus;
  test: boolean;
  urlRemovedAt: Date | null;
}

/**
 * What redelivering a callback does, by its status: a settled one (`delivered`, `failed`) is sent
 * again on a fresh schedule; a `pending` one is due now, its schedule going on from there (the
 * partner fixed its receiver and need not wait for the next retry); one being attempted right now
 * (`sending`, shown as pending) is left to that attempt. Whatever the move, an open destination's
 * next probe is brought forward to it (BRINGS_PROBE_FORWARD).
 */
export type RedeliveryMove = 'fresh_schedule' | 'due_now' | 'under_way';

const MOVES: Record<CallbackStatus, RedeliveryMove> = {
  delivered: 'fresh_schedule',
  failed: 'fresh_schedule',
  pending: 'due_now',
  sending: 'under_way',
};

/**
 * The one redelivery rule, for a partner's, an operator's, the portal's and the dashboard's: the
 * move a callback's redelivery makes, or why it is refused (409). A test callback gets its one
 * attempt only (send a new one); one whose URL the partner removed has nowhere to go. An open
 * circuit refuses nothing: the redelivery is the partner's repair, and it goes as the probe.
 */
export function redeliveryOf(c: RedeliveryFacts): RedeliveryMove | DomainError {
  const status = shownStatus(c.status);
  if (c.test) {
    return new DomainError(
      'conflict',
      ErrorCode.test_callback_not_redeliverable,
      'A test callback cannot be redelivered: it gets one attempt; send a new one (POST /v1/callbacks/test) ' +
        `(current status: ${status})`,
    );
  }
  if (c.urlRemovedAt) {
    return new DomainError(
      'conflict',
      ErrorCode.callback_url_removed,
      `Callback cannot be redelivered: its callback URL was removed at ${c.urlRemovedAt.toISOString()} ` +
        `(current status: ${status})`,
    );
  }
  return MOVES[c.status];
}
