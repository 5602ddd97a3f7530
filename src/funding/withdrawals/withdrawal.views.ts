import { formatMoney } from '../../platform/index.js';
import type { OfCompany } from '../company-requests/company-requests.service.js';
import { WithdrawalRequest } from './withdrawal-request.entity.js';

export function withdrawalView({ row: w, company }: OfCompany<WithdrawalRequest>) {
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

export function withdrawalStatusView({ row: w }: OfCompany<WithdrawalRequest>) {
  return { withdrawalId: w.id, status: w.status, updatedAt: w.updatedAt.toISOString() };
}
