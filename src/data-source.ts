import { Callback, CallbackAttempt } from './callbacks/index.js';
import { databaseOptions, IdempotencyKey } from './platform/index.js';
import { Company, LimitRequest, Loan, LoanPayment, WithdrawalRequest } from './funding/index.js';
import { Partner } from './partners/index.js';
import { Operator } from './operators/index.js';
import { DataSourceOptions } from 'typeorm';

/** Every entity the service maps (database/ knows none: features depend on it, not it on them). */
export const ENTITIES = [
  Partner,
  Company,
  LimitRequest,
  WithdrawalRequest,
  Loan,
  LoanPayment,
  Callback,
  CallbackAttempt,
  IdempotencyKey,
  Operator,
];

/** The service's data source options: its entities and migrations. */
export function dataSourceOptions(databaseUrl: string): DataSourceOptions {
  return databaseOptions(databaseUrl, ENTITIES);
}
