import { StartUpRepository } from './database/start-up.repository.js';
import { repositoryStatements, staticStatements } from './database/statement-recorder.js';
import { snapshotFiles } from './database/sql-snapshots.js';
import { WakeUpRepository } from './database/wake-up.repository.js';
import { IdempotencyKeyRepository } from './idempotency/idempotency-key.repository.js';

/** Where the snapshots are committed, from the repository's root. */
export const SNAPSHOT_DIR = 'src/platform/queries';

/**
 * The committed snapshot of the platform's statements (snapshotFiles): one file per repository,
 * each statement as its method sends it, called over a recording connection.
 */
export async function sqlSnapshots(): Promise<Map<string, string>> {
  const keys = await repositoryStatements('data-source', [IdempotencyKeyRepository]);
  return snapshotFiles('src/platform/**/*.repository.ts', {
    // The retention pass prunes on its own connection of the SqlPool.
    'idempotency-key': keys.map((s) => (s.name.endsWith('.prune') ? { ...s, on: 'sql-pool' } : s)),
    'wake-up': await repositoryStatements('sql-pool', [WakeUpRepository]),
    // Before Nest exists: on the maintenance database's client, and the data source's query runner.
    'start-up': await staticStatements('start-up', StartUpRepository, {
      // The name of a database to create, as DATABASE_URL names it.
      'StartUpRepository.createDatabase': (r, c) => [r.createDatabase(c, 'funding')],
    }),
  });
}
