import { repositoryStatements, snapshotFiles } from '../platform/index.js';
import { RelayRepository } from './relay.repository.js';

/** Where the snapshots are committed, from the repository's root. */
export const SNAPSHOT_DIR = 'src/delivery/queries';

/**
 * The committed snapshot of the delivery module's statements outside the callback store
 * (snapshotFiles): one file per repository, each statement as its method sends it, called over a
 * recording connection.
 */
export async function sqlSnapshots(): Promise<Map<string, string>> {
  return snapshotFiles('src/delivery/*.repository.ts', {
    // On the relay's own connection (relay-connection.ts), each statement with its deadline.
    relay: await repositoryStatements('relay', [RelayRepository]),
  });
}
