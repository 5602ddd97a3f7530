// funding/: companies, limit requests, withdrawals and loans; every change through the one domain transition.
// The public face of the module: other modules import only this file (.dependency-cruiser.cjs).
export { CompaniesService } from './companies/companies.service.js';
export { Company } from './companies/company.entity.js';
export { LimitRequest } from './limit-requests/limit-request.entity.js';
export { Loan, LoanPayment } from './loans/loan.entity.js';
export { WithdrawalRequest } from './withdrawals/withdrawal-request.entity.js';
export { FundingModule } from './funding.module.js';
