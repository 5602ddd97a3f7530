import { CallbackMessage } from '../../callbacks/index.js';
import { DomainError, ErrorCode, formatMoney } from '../../platform/index.js';
import { Company } from '../domain/company.entity.js';
import type { RequestResource } from '../company-requests/company-requests.service.js';
import { WithdrawalRequest } from './withdrawal-request.entity.js';
import { WITHDRAWAL_TRANSITIONS, WithdrawalStatus } from './withdrawal-status.js';

/** A withdrawal request as the transition template sees it (its own changes and a loan's repayment use it). */
export const WITHDRAWAL: RequestResource<WithdrawalRequest, WithdrawalStatus> = {
  entity: WithdrawalRequest,
  what: 'Withdrawal request',
  tracked: ['status', 'loanId'],
  transitions: WITHDRAWAL_TRANSITIONS,
  cancelled: 'cancelled',
  rejected: 'rejected',
  statusChanged: (w, company) => ({
    message: CallbackMessage.WithdrawalRequestStatusChanged,
    url: w.statusCallback,
    partnerId: company.partnerId,
    ids: { withdrawalId: w.id, companyId: company.id, limitRequestId: null, loanId: w.loanId },
  }),
};

/** A withdrawal may only draw on active credit, within the current balance. */
export function assertCanDraw(company: Company, amount: bigint): void {
  if (company.creditStatus !== 'active') {
    throw new DomainError(
      'rule',
      ErrorCode.credit_not_active,
      `The company credit is ${company.creditStatus}, not active`,
    );
  }
  const balance = company.creditLimit - company.borrowedAmount;
  if (amount > balance) {
    throw new DomainError(
      'rule',
      ErrorCode.insufficient_credit_balance,
      `amount ${formatMoney(amount)} exceeds the credit balance ${formatMoney(balance)}`,
    );
  }
}
