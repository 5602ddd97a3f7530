import { CallbackEvent } from '../callbacks/callback-recorder.js';
import { CallbackMessage } from '../callbacks/callback-message.js';
import { DomainError } from '../common/domain-error.js';
import { formatMoney } from '../common/money.js';
import { canTransition } from '../common/state-machine.js';
import { Company } from '../companies/company.entity.js';
import { WithdrawalRequest } from './withdrawal-request.entity.js';
import { WITHDRAWAL_TRANSITIONS, WithdrawalStatus } from './withdrawal-status.js';

/** A withdrawal may only draw on active credit, within the current balance. */
export function assertCanDraw(company: Company, amount: bigint): void {
  if (company.creditStatus !== 'active') {
    throw new DomainError('rule', 'WITHDRAWAL.CREDIT_NOT_ACTIVE', `The company credit is ${company.creditStatus}, not active`);
  }
  const balance = company.creditLimit - company.borrowedAmount;
  if (amount > balance) {
    throw new DomainError(
      'rule',
      'WITHDRAWAL.INSUFFICIENT_CREDIT_BALANCE',
      `amount ${formatMoney(amount)} exceeds the credit balance ${formatMoney(balance)}`,
    );
  }
}

/** 409 naming the current status when the state machine forbids the change. */
export function assertWithdrawalTransition(from: WithdrawalStatus, to: WithdrawalStatus): void {
  if (!canTransition(WITHDRAWAL_TRANSITIONS, from, to)) {
    throw new DomainError('conflict', 'WITHDRAWAL.ILLEGAL_TRANSITION', `Withdrawal request cannot become ${to}: its current status is ${from}`);
  }
}

/** Applies a status change and returns its callback. */
export function transitionWithdrawal(company: Company, w: WithdrawalRequest, to: WithdrawalStatus): CallbackEvent {
  assertWithdrawalTransition(w.status, to);
  w.status = to;
  w.updatedAt = new Date();
  return {
    message: CallbackMessage.WithdrawalRequestStatusChanged,
    url: w.statusCallback,
    partnerId: company.partnerId,
    ids: { withdrawalId: w.id, companyId: company.id, limitRequestId: null, loanId: w.loanId },
  };
}
