import { formatMoney } from '../../platform/index.js';
import { LoanPayment } from '../withdrawals/loan.entity.js';
import type { LoanWithPayments } from './loans.service.js';

const paymentView = (p: LoanPayment) => ({ id: p.id, amount: formatMoney(p.amount), paidAt: p.paidAt.toISOString() });

export function loanView({ loan, payments }: LoanWithPayments) {
  const views = payments.map(paymentView);
  return {
    id: loan.id,
    companyId: loan.companyId,
    withdrawalId: loan.withdrawalId,
    principal: formatMoney(loan.principal),
    outstanding: formatMoney(loan.outstanding),
    currency: loan.currency,
    status: loan.status,
    payments: views,
    lastPayment: views.at(-1) ?? null,
    createdAt: loan.createdAt.toISOString(),
    updatedAt: loan.updatedAt.toISOString(),
  };
}
