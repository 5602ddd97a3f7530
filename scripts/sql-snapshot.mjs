#!/usr/bin/env node
// `npm run sql:snapshot`: writes the callback store's statements as committed snapshots
// (src/callbacks/store/snapshots.ts says what and why), from the compiled code.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
execFileSync(process.execPath, [path.join(ROOT, 'scripts/build.mjs')], { stdio: 'inherit' });
const { SNAPSHOT_DIR, sqlSnapshots } = createRequire(import.meta.url)(
  path.join(ROOT, 'dist/src/callbacks/store/snapshots.js'),
);
const dir = path.join(ROOT, SNAPSHOT_DIR);
fs.mkdirSync(dir, { recursive: true });
const files = sqlSnapshots();
for (const f of fs.readdirSync(dir)) if (f.endsWith('.sql') && !files.has(f)) fs.rmSync(path.join(dir, f));
for (const [name, text] of files) fs.writeFileSync(path.join(dir, name), text);
console.log(`${files.size} snapshot files in ${SNAPSHOT_DIR}`);
