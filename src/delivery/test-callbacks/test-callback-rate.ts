import { EntityManager } from 'typeorm';
import { DomainError, ErrorCode } from '../../platform/index.js';
import type { TestCallbackRepository } from '../../callbacks/index.js';

/** Test callbacks a partner may have accepted in any rolling minute. */
export const TEST_CALLBACKS_PER_MINUTE = 10;
/** Any fixed number: with the partner, the advisory lock that makes the count and the insert after it one step. */
const TEST_CALLBACK_LOCK = 727_033;

/**
 * Inside the transaction that records a test callback: 429 when the partner had
 * TEST_CALLBACKS_PER_MINUTE accepted in the last minute, with Retry-After until the oldest of them
 * leaves the minute. Counted in PostgreSQL (callbacks_test_recent_idx), exactly: the partner's
 * test callbacks queue on a transaction-scoped advisory lock, so two cannot both see room for
 * one. Refused ones record nothing, so they do not count.
 */
export async function admitOneMoreTest(
  tests: TestCallbackRepository,
  m: EntityManager,
  partnerId: string,
): Promise<void> {
  const recent = await tests.recentTests(m, partnerId, TEST_CALLBACK_LOCK);
  if (recent.n >= TEST_CALLBACKS_PER_MINUTE) {
    throw new DomainError(
      'rate',
      ErrorCode.test_callback_rate_limited,
      `At most ${TEST_CALLBACKS_PER_MINUTE} test callbacks per minute; retry after the Retry-After delay`,
      Math.max(1, recent.free_in_s ?? 1),
    );
  }
}
