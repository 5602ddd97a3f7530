import { CallbackMessage } from '../callbacks/index.js';
import { repositoryStatements, snapshotFiles } from '../platform/index.js';
import { CallbackUrlRepository } from './callback-urls/callback-url.repository.js';
import { UrlMoveRepository } from './domain/url-move.repository.js';
import { TestTargetRepository } from './test-callbacks/test-target.repository.js';

/** Where the snapshots are committed, from the repository's root. */
export const SNAPSHOT_DIR = 'src/funding/queries';

/**
 * The committed snapshot of funding's statements written by hand (snapshotFiles), but its one-row
 * writes' (src/funding/domain/snapshots.ts): one file per repository, each statement as its method
 * sends it, called over a recording connection.
 */
export async function sqlSnapshots(): Promise<Map<string, string>> {
  return snapshotFiles('src/funding/**/*.repository.ts', {
    'callback-url': await repositoryStatements('data-source', [CallbackUrlRepository]),
    'url-move': await repositoryStatements('data-source', [UrlMoveRepository]),
    'test-target': await repositoryStatements('data-source', [TestTargetRepository], {
      // One statement per kind of resource a message concerns.
      'TestTargetRepository.latest': (r, x) => Object.values(CallbackMessage).map((message) => r.latest(x, message, x)),
    }),
  });
}
