import {
  lockedRowsStatements,
  repositoryStatements,
  type SealColumn,
  SEALED_COLUMNS,
  snapshotFiles,
  type SnapshotStatement,
  standInRow,
} from '../platform/index.js';
import { Partner } from './partner.entity.js';
import { ClientCertificateRepository } from './client-certificate.repository.js';
import { PartnerRepository } from './partner.repository.js';
import { PortalLinkRepository } from './portal-link.repository.js';
import { PortalSessionRepository } from './portal-session.repository.js';
import { SealedSecretRepository } from './sealed-secret.repository.js';

/** Where the snapshots are committed, from the repository's root. */
export const SNAPSHOT_DIR = 'src/partners/queries';

/** The re-sealing's statements are one per sealed column: each is called for every column of SEALED_COLUMNS. */
const EACH_SEALED_COLUMN = (call: (sealed: SealColumn, column: string) => unknown) =>
  (Object.keys(SEALED_COLUMNS) as SealColumn[]).flatMap((sealed) =>
    SEALED_COLUMNS[sealed].columns.map((column) => call(sealed, column)),
  );

/** A sealed value as the re-sealing read it (its row's keys are parameters: their number is the column's). */
const READ = { rid: 'r', keys: ['k'], value: 'v' };

/**
 * The committed snapshot of the partners module's statements (snapshotFiles): one file per
 * repository, each statement as its method sends it, called over a recording connection.
 */
export async function sqlSnapshots(): Promise<Map<string, string>> {
  const groups = {
    partner: PartnerRepository,
    'client-certificate': ClientCertificateRepository,
    'portal-link': PortalLinkRepository,
    'portal-session': PortalSessionRepository,
    'sealed-secret': SealedSecretRepository,
  };
  const statements: Record<string, SnapshotStatement[]> = {};
  for (const [group, repository] of Object.entries(groups)) {
    const sent = await repositoryStatements(
      'data-source',
      [repository],
      {
        'SealedSecretRepository.batch': (r, x) => EACH_SEALED_COLUMN((s, c) => r.batch(s, c, x, x)),
        'SealedSecretRepository.replace': (r, x) => EACH_SEALED_COLUMN((s, c) => r.replace(s, c, READ, x)),
        // A partner as TypeORM saves it, its id given (the partner's creation).
        'PartnerRepository.insert': (r, _, orm) => [r.insert(orm, { ...standInRow(orm, Partner, true), id: 'id' })],
        'PartnerRepository.byApiKeyHash': (r) => [r.byApiKeyHash('hash')],
      },
      [],
      // The statements TypeORM builds for Partner, over a recording data source of it.
      [Partner],
    );
    // The retention pass prunes on its own connection of the SqlPool.
    statements[group] = sent.map((s) => (s.name.endsWith('.prune') ? { ...s, on: 'sql-pool' } : s));
  }
  // A change's lock and write-back of the partner's row (the platform's LockedRows, for Partner).
  statements['locked-rows'] = await lockedRowsStatements([Partner], [Partner], [Partner]);
  return snapshotFiles("src/partners/*.repository.ts and the platform's LockedRows", statements);
}
