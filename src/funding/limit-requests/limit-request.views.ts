import { formatMoney } from '../../platform/index.js';
import type { OfCompany } from '../company-requests/company-requests.service.js';
import { LimitRequest } from './limit-request.entity.js';

export function limitRequestView({ row: r, company }: OfCompany<LimitRequest>) {
  return {
    id: r.id,
    companyId: r.companyId,
    amount: formatMoney(r.amount),
    currency: company.currency,
    status: r.status,
    status_callback: r.statusCallback,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

export function limitRequestStatusView({ row: r }: OfCompany<LimitRequest>) {
  return { limitRequestId: r.id, status: r.status, updatedAt: r.updatedAt.toISOString() };
}
