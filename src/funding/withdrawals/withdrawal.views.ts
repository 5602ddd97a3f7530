import { formatMoney } from '../../platform/index.js';
import type { WithdrawalWithCompany } from './withdrawals.service.js';

export function withdrawalView({ withdrawal: w, company }: WithdrawalWithCompany) {
  return {
    id: w.id,
    companyId: w.companyId,
    amount: formatMoney(w.amount),
    currency: company.currency,
    status: w.status,
    status_callback: w.statusCallback,
    loan_status_callback: w.loanStatusCallback,
    loanId: w.loanId,
    createdAt: w.createdAt.toISOString(),
    updatedAt: w.updatedAt.toISOString(),
  };
}

export function withdrawalStatusView({ withdrawal: w }: WithdrawalWithCompany) {
  return { withdrawalId: w.id, status: w.status, updatedAt: w.updatedAt.toISOString() };
}
