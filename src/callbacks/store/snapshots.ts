import { snapshotFiles } from '../../platform/index.js';
import { STATEMENT_GROUPS } from './statements.js';

/** Where the snapshots are committed, from the repository's root. */
export const SNAPSHOT_DIR = 'src/callbacks/store/queries';

/** The committed snapshot of every store statement (snapshotFiles): one file per group of statements.ts. */
export function sqlSnapshots(): Map<string, string> {
  return snapshotFiles('src/callbacks/store/statements.ts', STATEMENT_GROUPS);
}
