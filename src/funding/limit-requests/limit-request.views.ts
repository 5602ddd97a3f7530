import { formatMoney } from '../../platform/index.js';
import { Company } from '../companies/company.entity.js';
import { LimitRequest } from './limit-request.entity.js';

export function limitRequestView({ request: r, company }: { request: LimitRequest; company: Company }) {
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

export function limitRequestStatusView({ request: r }: { request: LimitRequest }) {
  return { limitRequestId: r.id, status: r.status, updatedAt: r.updatedAt.toISOString() };
}
