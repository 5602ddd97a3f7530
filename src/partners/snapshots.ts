import {
  repositoryStatements,
  SEALED_COLUMNS,
  type SealColumn,
  snapshotFiles,
  type SnapshotStatement,
} from '../platform/index.js';
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
    const sent = await repositoryStatements('data-source', [repository], {
      'SealedSecretRepository.batch': (r, x) => EACH_SEALED_COLUMN((s, c) => r.batch(s, c, x, x)),
      'SealedSecretRepository.replace': (r, x) => EACH_SEALED_COLUMN((s, c) => r.replace(s, c, x, x)),
    });
    // The retention pass prunes on its own connection of the SqlPool.
    statements[group] = sent.map((s) => (s.name.endsWith('.prune') ? { ...s, on: 'sql-pool' } : s));
  }
  return snapshotFiles('src/partners/*.repository.ts', statements);
}
