import { lockedRowsStatements, repositoryStatements, snapshotFiles } from '../platform/index.js';
import { AuditEntryRepository } from './audit/audit-entry.repository.js';
import { Operator } from './operator.entity.js';
import { OperatorRepository } from './operator.repository.js';

/** Where the snapshots are committed, from the repository's root. */
export const SNAPSHOT_DIR = 'src/operators/queries';

/** An audit page's conditions: none, and every one (the statement with each condition the API takes). */
const NO_CONDITION = {};
const EVERY_CONDITION = { operatorId: 'o', targetType: 't', targetId: 'i', since: new Date(0), beforeSeq: '1' };

/**
 * The committed snapshot of the operators module's statements (snapshotFiles): one file per
 * repository, each statement as its method sends it, called over a recording connection.
 * (AuditEntryRepository.rowsInsert runs nothing: its part is shown in the statement that holds it,
 * src/funding/domain/queries.)
 */
export async function sqlSnapshots(): Promise<Map<string, string>> {
  return snapshotFiles("src/operators/*.repository.ts and the platform's LockedRows", {
    // With the statements TypeORM builds for the entity, over a recording data source of it.
    operator: await repositoryStatements(
      'data-source',
      [OperatorRepository],
      { 'OperatorRepository.insert': (r, _, orm) => [r.insert(orm, { name: 'n', role: 'admin', tokenHash: 'h' })] },
      [],
      [Operator],
    ),
    // A revocation's lock and write-back of the operator's row (the platform's LockedRows, for Operator).
    'locked-rows': await lockedRowsStatements([Operator], [Operator], [Operator]),
    'audit-entry': await repositoryStatements('data-source', [AuditEntryRepository], {
      'AuditEntryRepository.page': (r) => [r.page(NO_CONDITION, 51), r.page(EVERY_CONDITION, 51)],
    }),
  });
}
