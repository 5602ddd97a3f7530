#!/usr/bin/env node
// `npm run sql:snapshot`: writes every module's statements as committed snapshots, from the compiled
// code: each snapshots.ts under src/ (src/platform/database/sql-snapshots.ts says what and why)
// exports its SNAPSHOT_DIR and sqlSnapshots(); test/sql-snapshots.spec.ts finds them by the same name.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
execFileSync(process.execPath, [path.join(ROOT, 'scripts/build.mjs')], { stdio: 'inherit' });
const require = createRequire(import.meta.url);
const compiled = (dir) =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? compiled(path.join(dir, e.name)) : e.name === 'snapshots.js' ? [path.join(dir, e.name)] : [],
    );
for (const file of compiled(path.join(ROOT, 'dist/src'))) {
  const { SNAPSHOT_DIR, sqlSnapshots } = require(file);
  const dir = path.join(ROOT, SNAPSHOT_DIR);
  fs.mkdirSync(dir, { recursive: true });
  const files = await sqlSnapshots();
  for (const f of fs.readdirSync(dir)) if (f.endsWith('.sql') && !files.has(f)) fs.rmSync(path.join(dir, f));
  for (const [name, text] of files) fs.writeFileSync(path.join(dir, name), text);
  console.log(`${files.size} snapshot files in ${SNAPSHOT_DIR}`);
}
