import { CallbackAttempt, Callback } from './callbacks/callback.entity.js';
import { IdempotencyKey } from './platform/idempotency/idempotency-key.entity.js';
import { Company } from './funding/companies/company.entity.js';
import { LimitRequest } from './funding/limit-requests/limit-request.entity.js';
import { Loan, LoanPayment } from './funding/loans/loan.entity.js';
import { Partner } from './partners/partner.entity.js';
import { WithdrawalRequest } from './funding/withdrawals/withdrawal-request.entity.js';
import { Operator } from './operators/operator.entity.js';
import { DataSourceOptions } from 'typeorm';
import { databaseOptions } from './platform/database/database.js';

/** Every entity the service maps (database/ knows none: features depend on it, not it on them). */
export const ENTITIES = [Partner, Company, LimitRequest, WithdrawalRequest, Loan, LoanPayment, Callback, CallbackAttempt, IdempotencyKey, Operator];

/** The service's data source options: its entities and migrations. */
export function dataSourceOptions(databaseUrl: string): DataSourceOptions {
  return databaseOptions(databaseUrl, ENTITIES);
}
