import { CallbackEvent, CallbackMessage } from '../../callbacks/index.js';
import { DomainError, ErrorCode, formatMoney, moneyFromDb } from '../../platform/index.js';
import { Company } from './company.entity.js';

/** The tracked credit properties of a company at one moment. */
export interface CreditSnapshot {
  creditLimit: bigint;
  creditStatus: string;
  borrowedAmount: bigint;
  annualInterestRate: string;
  repaymentTermDays: number;
}

/** The company's properties a change's callbacks (0 and 2) are decided on. */
export const CREDIT_PROPERTIES = [
  'creditLimit',
  'creditStatus',
  'borrowedAmount',
  'annualInterestRate',
  'repaymentTermDays',
] as const satisfies readonly (keyof CreditSnapshot & keyof Company)[];

export function creditSnapshot(c: Company): CreditSnapshot {
  return {
    creditLimit: c.creditLimit,
    creditStatus: c.creditStatus,
    borrowedAmount: c.borrowedAmount,
    annualInterestRate: c.annualInterestRate,
    repaymentTermDays: c.repaymentTermDays,
  };
}

/** Which company messages a change calls for: 0 when limit, status or terms changed; 2 when the balance did. */
export function creditMessages(before: CreditSnapshot, after: CreditSnapshot): CallbackMessage[] {
  const out: CallbackMessage[] = [];
  if (
    before.creditLimit !== after.creditLimit ||
    before.creditStatus !== after.creditStatus ||
    moneyFromDb(before.annualInterestRate) !== moneyFromDb(after.annualInterestRate) ||
    before.repaymentTermDays !== after.repaymentTermDays
  ) {
    out.push(CallbackMessage.CreditLimitUpdated);
  }
  if (before.creditLimit - before.borrowedAmount !== after.creditLimit - after.borrowedAmount) {
    out.push(CallbackMessage.CreditBalanceUpdated);
  }
  return out;
}

/** The company callbacks for a credit change; also stamps the credit's `updatedAt` when anything changed. */
export function creditEvents(company: Company, before: CreditSnapshot): CallbackEvent[] {
  const messages = creditMessages(before, creditSnapshot(company));
  if (messages.length > 0) company.creditUpdatedAt = new Date();
  return messages.map((message) => ({
    message,
    url: company.callbackUrl,
    partnerId: company.partnerId,
    ids: { withdrawalId: null, companyId: company.id, limitRequestId: null, loanId: null },
  }));
}

/** A credit limit may not fall below what the company has borrowed (422); `what` names the proposed limit. */
export function assertLimitCoversBorrowed(limit: bigint, company: Company, what: string): void {
  if (limit < company.borrowedAmount) {
    throw new DomainError(
      'rule',
      ErrorCode.credit_limit_below_borrowed,
      `${what} ${formatMoney(limit)} is below the borrowed amount ${formatMoney(company.borrowedAmount)}`,
    );
  }
}
