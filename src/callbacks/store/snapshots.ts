import { repositoryStatements, snapshotFiles, type SnapshotStatement } from '../../platform/index.js';
import { Callback, CallbackAttempt } from '../callback.entity.js';
import { CallbackMessage } from '../callback-message.js';
import { CallbackReadRepository } from './reads.js';
import { STATEMENT_GROUPS, STORE_STATEMENTS } from './statements.js';
import { TestCallbackRepository } from './test-callbacks.js';

/** Where the snapshots are committed, from the repository's root. */
export const SNAPSHOT_DIR = 'src/callbacks/store/queries';

/** A list of callbacks with every condition (each is left out when not given). */
const EVERY_CONDITION = {
  partnerId: 'p',
  statuses: ['failed' as const],
  companyId: 'c',
  origin: 'o',
  message: CallbackMessage.LoanPaymentRegistered,
  beforeSeq: '1',
  createdFrom: new Date(0),
  createdTo: new Date(0),
  rows: 51,
};

/**
 * The statements TypeORM builds for the store's methods that read callbacks through the entities
 * (a list, a callback and its attempts, a test callback just inserted): each method called over a
 * recording data source of them; what the catalogue holds is left to it.
 */
async function builtByTypeorm(): Promise<SnapshotStatement[]> {
  const catalogued = new Set(STORE_STATEMENTS.map((s) => s.text.trim()));
  const built = await repositoryStatements(
    'orm',
    [CallbackReadRepository, TestCallbackRepository],
    {
      'CallbackReadRepository.listCallbacks': (r) => [r.listCallbacks({ rows: 51 }), r.listCallbacks(EVERY_CONDITION)],
      'CallbackReadRepository.callback': (r) => [r.callback('id'), r.callback('id', 'p')],
      'CallbackReadRepository.attempts': (r) => [r.attempts('id')],
      'TestCallbackRepository.callback': (r, _, orm) => [r.callback(orm, 'id')],
    },
    [],
    [Callback, CallbackAttempt],
  );
  return built.filter((s) => !catalogued.has(s.text));
}

/**
 * The committed snapshot of every store statement (snapshotFiles): one file per group of
 * statements.ts, and one of the statements TypeORM builds (builtByTypeorm).
 */
export async function sqlSnapshots(): Promise<Map<string, string>> {
  return new Map([
    ...snapshotFiles('src/callbacks/store/statements.ts', STATEMENT_GROUPS),
    ...snapshotFiles('src/callbacks/store/*.ts (what TypeORM builds)', { 'built-by-typeorm': await builtByTypeorm() }),
  ]);
}
