import { repositoryStatements, snapshotFiles } from '../platform/index.js';
import { HealthRepository } from './health.repository.js';
import { RetentionLockRepository } from './retention-lock.repository.js';

/** Where the snapshots are committed, from the repository's root. */
export const SNAPSHOT_DIR = 'src/operations/queries';

/**
 * The committed snapshot of the operations module's statements (snapshotFiles): one file per
 * repository, each statement as its method sends it, called over a recording connection.
 */
export async function sqlSnapshots(): Promise<Map<string, string>> {
  return snapshotFiles('src/operations/*.repository.ts', {
    health: await repositoryStatements('data-source', [HealthRepository]),
    // On the retention pass's own connection of the SqlPool.
    'retention-lock': await repositoryStatements('sql-pool', [RetentionLockRepository]),
  });
}
