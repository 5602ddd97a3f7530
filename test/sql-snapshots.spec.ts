/**
 * The callback store's statements as the code builds them equal their committed snapshots
 * (src/callbacks/store/snapshots.ts): a change of SQL shows in review as a change of a .sql file.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { SNAPSHOT_DIR, sqlSnapshots } from '../src/callbacks/store/snapshots.js';
import { ROOT } from './support/doc-blocks.js';

describe('the SQL snapshots of the callback store', () => {
  const dir = path.join(ROOT, SNAPSHOT_DIR);
  const files = sqlSnapshots();

  it('hold every statement as the code builds it (run `npm run sql:snapshot` after changing one, and commit the files)', () => {
    const stale = [...files]
      .filter(
        ([name, text]) => !existsSync(path.join(dir, name)) || readFileSync(path.join(dir, name), 'utf8') !== text,
      )
      .map(([name]) => name);
    expect(stale).toEqual([]);
  });

  it('have no file the code no longer writes (run `npm run sql:snapshot`)', () => {
    expect(readdirSync(dir).filter((f) => f.endsWith('.sql') && !files.has(f))).toEqual([]);
  });
});
