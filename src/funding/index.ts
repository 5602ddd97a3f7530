// funding/: companies, limit requests, withdrawals and loans; every change through the one domain transition.
// The public face of the module: other modules import only this file (.dependency-cruiser.cjs).
export { CallbackUrlList } from './callback-urls/callback-url-list.service.js';
export type { CallbackUrlView } from './callback-urls/callback-url-list.service.js';
export { CallbackUrlMove } from './callback-urls/callback-url-move.service.js';
export { CompaniesService } from './companies/companies.service.js';
export { TestCallbacks } from './test-callbacks/test-callbacks.service.js';
export { Company } from './domain/company.entity.js';
export { LimitRequest } from './limit-requests/limit-request.entity.js';
export { Loan, LoanPayment } from './withdrawals/loan.entity.js';
export { WithdrawalRequest } from './withdrawals/withdrawal-request.entity.js';
export { FundingModule } from './funding.module.js';
