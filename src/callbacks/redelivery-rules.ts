import { DomainError } from '../http/domain-error.js';
import { ErrorCode } from '../http/error-codes.js';
import { CallbackStatus, shownStatus } from './callback-status.js';

/** The condition, in SQL over `callbacks`, of a callback any redelivery may restart. */
export const REDELIVERABLE = `url_removed_at IS NULL AND NOT test`;


/**
 * Why a callback outside {@link REDELIVERABLE} cannot be redelivered (409), for every redelivery
 * (a partner's, an operator's, the dashboard's Retry): a test callback gets its one attempt only
 * (send a new one); one whose URL the partner removed has nowhere to go. Null when it may be.
 */
export function redeliveryRefusal(c: { test: boolean; urlRemovedAt: Date | null; status: CallbackStatus }): DomainError | null {
  if (c.test) {
    return new DomainError('conflict', ErrorCode.test_callback_not_redeliverable, `A test callback cannot be redelivered: it gets one attempt; send a new one (POST /v1/callbacks/test) (current status: ${shownStatus(c.status)})`);
  }
  if (c.urlRemovedAt) {
    return new DomainError('conflict', ErrorCode.callback_url_removed, `Callback cannot be redelivered: its callback URL was removed at ${c.urlRemovedAt.toISOString()} (current status: ${shownStatus(c.status)})`);
  }
  return null;
}
