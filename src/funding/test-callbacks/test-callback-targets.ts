import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { TargetRow, TestTargetRepository } from './test-target.repository.js';
import { CallbackIds, CallbackMessage } from '../../callbacks/index.js';
import { notFound } from '../../platform/index.js';

type Row = TargetRow;

/**
 * Per message, the company's most recently created resource of the kind the message concerns
 * (docs/partners.md, "Testing your receiver"): its URL for that message, and its ids. A kind the
 * company does not have leaves its ids null (and, without a `url`, nothing to send to).
 */
const LOOKUPS: Record<
  CallbackMessage,
  { source: string; ids: (r: Row | undefined, companyId: string) => CallbackIds }
> = {
  [CallbackMessage.CreditLimitUpdated]: companyLookup(),
  [CallbackMessage.CreditBalanceUpdated]: companyLookup(),
  [CallbackMessage.WithdrawalRequestStatusChanged]: {
    source: "the company's most recent withdrawal request (status_callback)",
    ids: (r, companyId) => ({
      withdrawalId: r?.withdrawalId ?? null,
      companyId,
      limitRequestId: null,
      loanId: r?.loanId ?? null,
    }),
  },
  [CallbackMessage.LimitRequestStatusChanged]: {
    source: "the company's most recent limit request (status_callback)",
    ids: (r, companyId) => ({ withdrawalId: null, companyId, limitRequestId: r?.limitRequestId ?? null, loanId: null }),
  },
  [CallbackMessage.LoanPaymentRegistered]: {
    source: "the company's most recent loan (its withdrawal request's loan_status_callback)",
    ids: (r, companyId) => ({
      withdrawalId: r?.withdrawalId ?? null,
      companyId,
      limitRequestId: null,
      loanId: r?.loanId ?? null,
    }),
  },
};

function companyLookup() {
  return {
    source: "the company's callback URL",
    ids: (_r: Row | undefined, companyId: string): CallbackIds => ({
      withdrawalId: null,
      companyId,
      limitRequestId: null,
      loanId: null,
    }),
  };
}

/** Where a test callback of a message goes without a `url`, and the ids its body carries. */
export interface TestTarget {
  /** The URL the company's resources would use for the message; null when none is registered. */
  url: string | null;
  ids: CallbackIds;
  /** Where the URL was looked for, for the 422 when there is none. */
  source: string;
}

/** Where a company's test callbacks go, read from its resources' URL properties. */
@Injectable()
export class TestTargets {
  constructor(private readonly targets: TestTargetRepository) {}

  /** The company's (this partner's, else 404) target for a test of `message`, read in the transaction `m`. */
  async find(m: EntityManager, partnerId: string, companyId: string, message: CallbackMessage): Promise<TestTarget> {
    if (!(await this.targets.owned(m, partnerId, companyId))) throw notFound('Company');
    const lookup = LOOKUPS[message];
    const row = await this.targets.latest(m, message, companyId);
    return { url: row?.url ?? null, ids: lookup.ids(row, companyId), source: lookup.source };
  }
}
