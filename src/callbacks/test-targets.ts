import type { EntityManager } from 'typeorm';
import type { CallbackIds, CallbackMessage } from './callback-message.js';

/** Where a test callback of a message goes without a `url`, and the ids its body carries. */
export interface TestTarget {
  /** The URL the company's resources would use for the message; null when none is registered. */
  url: string | null;
  ids: CallbackIds;
  /** Where the URL was looked for, for the 422 when there is none. */
  source: string;
}

/**
 * A company's target for a test callback of a message, read from the funding module's tables: the
 * face it offers the delivery module's test callbacks, which may not import it
 * (.dependency-cruiser.cjs). The funding module provides it (FundingTestTargets).
 */
export abstract class TestTargets {
  /** The company's (this partner's, else 404) target for a test of `message`, read in the transaction `m`. */
  abstract find(m: EntityManager, partnerId: string, companyId: string, message: CallbackMessage): Promise<TestTarget>;
}
