import { formatMoney, VariantNames } from '../../platform/index.js';
import { Company } from '../domain/company.entity.js';

export function companyView(c: Company, names: VariantNames) {
  return {
    id: c.id,
    name: c.name,
    registrationNumber: c.registrationNumber,
    currency: c.currency,
    [names.companyCallbackProperty]: c.callbackUrl,
    createdAt: c.createdAt.toISOString(),
  };
}

export function creditStatusView(c: Company) {
  return {
    companyId: c.id,
    creditStatus: c.creditStatus,
    creditLimit: formatMoney(c.creditLimit),
    borrowedAmount: formatMoney(c.borrowedAmount),
    creditBalance: formatMoney(c.creditLimit - c.borrowedAmount),
    currency: c.currency,
    updatedAt: c.creditUpdatedAt.toISOString(),
  };
}

export function termsView(c: Company) {
  return {
    companyId: c.id,
    creditLimit: formatMoney(c.creditLimit),
    currency: c.currency,
    annualInterestRate: c.annualInterestRate,
    repaymentTermDays: c.repaymentTermDays,
    updatedAt: c.creditUpdatedAt.toISOString(),
  };
}
