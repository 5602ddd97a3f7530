import { CallbackMessage } from '../callbacks/index.js';
import {
  lockedRowsStatements,
  repositoryStatements,
  type SnapshotCalls,
  snapshotFiles,
  standInRow,
} from '../platform/index.js';
import { CallbackUrlRepository } from './callback-urls/callback-url.repository.js';
import { Company } from './domain/company.entity.js';
import { FundingRowRepository } from './domain/funding-row.repository.js';
import { UrlMoveRepository } from './domain/url-move.repository.js';
import { LimitRequest } from './limit-requests/limit-request.entity.js';
import { LoanPaymentRepository } from './loans/loan-payment.repository.js';
import { Loan, LoanPayment } from './withdrawals/loan.entity.js';
import { WithdrawalRequest } from './withdrawals/withdrawal-request.entity.js';
import { TestTargetRepository } from './test-callbacks/test-target.repository.js';

/** Where the snapshots are committed, from the repository's root. */
export const SNAPSHOT_DIR = 'src/funding/queries';

/** The entities whose statements TypeORM builds, over a recording data source of them. */
const ENTITIES = [Company, LimitRequest, WithdrawalRequest, Loan, LoanPayment];
/** The rows of a company a change reads or locks: limit requests, withdrawals, loans. */
const COMPANY_ROWS = [LimitRequest, WithdrawalRequest, Loan];
/** The rows a change writes back (the company's own and its rows'). */
const WRITTEN_BACK = [Company, ...COMPANY_ROWS];

/**
 * FundingRowRepository's methods called for each entity the code calls them for (a method taking an
 * entity builds one statement per entity), each lock in a transaction as TypeORM asks.
 */
const FUNDING_ROW_CALLS: SnapshotCalls = {
  'FundingRowRepository.company': (r, _, orm) => [r.company(orm, 'p', 'c')],
  'FundingRowRepository.lockCompany': (r, _, orm) => [
    orm.transaction((m) => Promise.resolve(r.lockCompany(m, 'p', 'c'))),
  ],
  'FundingRowRepository.lockCompanyById': (r, _, orm) => [
    orm.transaction((m) => Promise.resolve(r.lockCompanyById(m, 'c'))),
  ],
  'FundingRowRepository.row': (r, _, orm) => COMPANY_ROWS.map((e) => r.row(orm, e, 'id')),
  'FundingRowRepository.rowOfCompany': (r, _, orm) => COMPANY_ROWS.map((e) => r.rowOfCompany(orm, e, 'id', 'c')),
  'FundingRowRepository.lockRowOfCompany': (r, _, orm) =>
    COMPANY_ROWS.map((e) => orm.transaction((m) => Promise.resolve(r.lockRowOfCompany(m, e, 'id', 'c')))),
  // Each a new row: its id and creation time are the database's.
  'FundingRowRepository.insert': (r, _, orm) =>
    [Company, ...COMPANY_ROWS, LoanPayment].map((e) => r.insert(orm, e, standInRow(orm, e, true))),
  'FundingRowRepository.companiesOfPartner': (r) => [
    r.companiesOfPartner('p', { limit: 21 }),
    r.companiesOfPartner('p', { name: 'n', limit: 21 }),
  ],
};

/**
 * The committed snapshot of funding's statements written by hand (snapshotFiles), but its one-row
 * writes' (src/funding/domain/snapshots.ts): one file per repository, each statement as its method
 * sends it, called over a recording connection.
 */
export async function sqlSnapshots(): Promise<Map<string, string>> {
  return snapshotFiles("src/funding/**/*.repository.ts and the platform's LockedRows", {
    'funding-row': await repositoryStatements('data-source', [FundingRowRepository], FUNDING_ROW_CALLS, [], ENTITIES),
    'loan-payment': await repositoryStatements(
      'data-source',
      [LoanPaymentRepository],
      { 'LoanPaymentRepository.payments': (r) => [r.payments('l')] },
      [],
      ENTITIES,
    ),
    // A change's write-back of each row it holds (the platform's LockedRows).
    'locked-rows': await lockedRowsStatements([], WRITTEN_BACK, ENTITIES),
    'callback-url': await repositoryStatements('data-source', [CallbackUrlRepository]),
    'url-move': await repositoryStatements('data-source', [UrlMoveRepository]),
    'test-target': await repositoryStatements('data-source', [TestTargetRepository], {
      // One statement per kind of resource a message concerns.
      'TestTargetRepository.latest': (r, x) => Object.values(CallbackMessage).map((message) => r.latest(x, message, x)),
    }),
  });
}
