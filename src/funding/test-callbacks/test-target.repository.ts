import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { CallbackMessage } from '../../callbacks/index.js';

/** A resource a test callback's target is read from: its URL for the message, and its ids. */
export type TargetRow = Record<string, string | null>;

/** The company's callback URL. */
const COMPANY_URL = `SELECT c.callback_url AS url FROM companies c WHERE c.id = $1`;

const LATEST_WITHDRAWAL = `SELECT w.status_callback AS url, w.id AS "withdrawalId", w.loan_id AS "loanId"
            FROM withdrawal_requests w WHERE w.company_id = $1 ORDER BY w.created_at DESC, w.id DESC LIMIT 1`;

const LATEST_LIMIT_REQUEST = `SELECT l.status_callback AS url, l.id AS "limitRequestId"
            FROM limit_requests l WHERE l.company_id = $1 ORDER BY l.created_at DESC, l.id DESC LIMIT 1`;

const LATEST_LOAN = `SELECT w.loan_status_callback AS url, l.id AS "loanId", w.id AS "withdrawalId"
            FROM withdrawal_requests w JOIN loans l ON l.id = w.loan_id
           WHERE w.company_id = $1 ORDER BY l.created_at DESC, l.id DESC LIMIT 1`;

/**
 * Per message, the company's ($1) most recently created resource of the kind the message concerns
 * (docs/partners.md, "Testing your receiver"): its URL for that message, and its ids.
 */
const LATEST: Record<CallbackMessage, string> = {
  [CallbackMessage.CreditLimitUpdated]: COMPANY_URL,
  [CallbackMessage.CreditBalanceUpdated]: COMPANY_URL,
  [CallbackMessage.WithdrawalRequestStatusChanged]: LATEST_WITHDRAWAL,
  [CallbackMessage.LimitRequestStatusChanged]: LATEST_LIMIT_REQUEST,
  [CallbackMessage.LoanPaymentRegistered]: LATEST_LOAN,
};

/** The statements of a test callback's target (test-callback-targets.ts), in the caller's transaction. */
@Injectable()
export class TestTargetRepository {
  /** Whether the company is this partner's. */
  async owned(m: EntityManager, partnerId: string, companyId: string): Promise<boolean> {
    const owned: unknown[] = await m.query(`SELECT 1 FROM companies WHERE id = $1 AND partner_id = $2`, [
      companyId,
      partnerId,
    ]);
    return owned.length > 0;
  }

  /** The resource a test of `message` is sent for; one statement per kind of resource. */
  async latest(m: EntityManager, message: CallbackMessage, companyId: string): Promise<TargetRow | undefined> {
    const [row]: (TargetRow | undefined)[] = await m.query(LATEST[message], [companyId]);
    return row;
  }
}
