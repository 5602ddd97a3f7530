/**
 * Every module's statements as the code builds them equal their committed snapshots: each
 * `snapshots.ts` under src/ (the callback store's, funding's one-row writes', each module's repositories') writes its files
 * (src/platform/database/sql-snapshots.ts), and a change of SQL shows in review as a change of a .sql file.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ONE_ROW_ENTITIES } from '../src/funding/domain/snapshots.js';
import { ROOT } from './support/doc-blocks.js';
import { sources } from './support/source-files.js';

type SnapshotModule = { SNAPSHOT_DIR: string; sqlSnapshots: () => Map<string, string> | Promise<Map<string, string>> };

/** What `npm run sql:snapshot` writes too (scripts/sql-snapshot.mjs finds them by the same name). */
const MODULES = sources('src').filter((f) => path.basename(f) === 'snapshots.ts');

it("finds the snapshots of the callback store, funding's and each module's repositories'", () => {
  expect(MODULES).toEqual([
    'src/callbacks/store/snapshots.ts',
    'src/delivery/snapshots.ts',
    'src/funding/domain/snapshots.ts',
    'src/funding/snapshots.ts',
    'src/operations/snapshots.ts',
    'src/operators/snapshots.ts',
    'src/partners/snapshots.ts',
    'src/platform/snapshots.ts',
  ]);
});

describe.each(MODULES)('the SQL snapshots of %s', (file) => {
  let dir: string;
  let files: Map<string, string>;

  beforeAll(async () => {
    const mod = (await import(path.join(ROOT, file))) as SnapshotModule;
    dir = path.join(ROOT, mod.SNAPSHOT_DIR);
    files = await mod.sqlSnapshots();
  });

  it('hold every statement as the code builds it (run `npm run sql:snapshot` after changing one, and commit the files)', () => {
    expect(files.size).toBeGreaterThan(0);
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

it("snapshot the one-row statements of every table funding's one-row changes serve", () => {
  const served = sources('src/funding').flatMap((f) =>
    [...readFileSync(path.join(ROOT, f), 'utf8').matchAll(/extends OneRowBatches<(\w+)>/g)].map((m) => m[1]),
  );
  expect(served.length).toBeGreaterThan(0);
  expect(ONE_ROW_ENTITIES.map((e) => e.name)).toEqual(served);
});
