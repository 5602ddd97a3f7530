#!/usr/bin/env node
// `npm run build` / `npm start`'s build step, and the test suite's: compiles only when the inputs
// changed since dist/ was built, and then into a fresh directory moved into place whole. A start
// in a checkout where the suite runs `node dist/src/main.js` thus never deletes or half-writes the
// files under it (`nest build` used to wipe dist/ on every start). Concurrent builds take turns
// on a lock directory; the second finds dist/ current and does nothing.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist');
const LOCK = path.join(ROOT, '.dist.lock');
const STAMP = '.build-inputs';
// What the compiled output depends on: the TypeScript under src and bench (tsconfig.build.json
// compiles those; nothing else there is built, and a bench run rewrites bench/results.json) and the
// build's settings. Besides TypeScript, the portal's templates, stylesheet and script (ASSETS) are copied
// beside the compiled code, where it reads them (src/portal/views → dist/src/portal/views); and the
// partner guide the service serves with its pictures (GUIDE: docs/ → dist/docs).
const SOURCES = ['src', 'bench'];
const ASSETS = ['.eta', '.css', '.js'];
const GUIDE = () => files('docs').filter((f) => f === path.join('docs', 'partners.md') || f.endsWith('.png'));
const SETTINGS = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json', 'scripts/build.mjs'];

function files(rel) {
  const abs = path.join(ROOT, rel);
  if (!fs.existsSync(abs)) return [];
  if (!fs.statSync(abs).isDirectory()) return [rel];
  return fs
    .readdirSync(abs)
    .sort()
    .flatMap((name) => files(path.join(rel, name)));
}

export function inputsHash() {
  const hash = createHash('sha256');
  for (const rel of [
    ...SOURCES.flatMap(files).filter((f) => f.endsWith('.ts') || isAsset(f)),
    ...GUIDE(),
    ...SETTINGS.flatMap(files),
  ]) {
    hash.update(`${rel.split(path.sep).join('/')}\0`);
    hash.update(fs.readFileSync(path.join(ROOT, rel)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

function isAsset(rel) {
  return ASSETS.some((ext) => rel.endsWith(ext));
}

/** The assets and the guide, copied into `out` at the same relative paths. */
function copyAssets(out) {
  for (const rel of [...SOURCES.flatMap(files).filter(isAsset), ...GUIDE()]) {
    fs.mkdirSync(path.dirname(path.join(out, rel)), { recursive: true });
    fs.copyFileSync(path.join(ROOT, rel), path.join(out, rel));
  }
}

function builtHash() {
  try {
    return fs.readFileSync(path.join(DIST, STAMP), 'utf8').trim();
  } catch {
    return null;
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

/** mkdir is atomic: whoever creates the directory holds the lock. A dead holder's lock is taken over. */
async function lock() {
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    try {
      fs.mkdirSync(LOCK);
      fs.writeFileSync(path.join(LOCK, 'pid'), String(process.pid));
      return;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
    }
    let holder = 0;
    let since = Date.now();
    try {
      since = fs.statSync(LOCK).mtimeMs;
      holder = Number(fs.readFileSync(path.join(LOCK, 'pid'), 'utf8')) || 0;
    } catch {
      // the holder is between mkdir and writing its pid, or has just released the lock
    }
    if (holder ? !alive(holder) : Date.now() - since > 30_000) {
      fs.rmSync(LOCK, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`another build holds ${LOCK} for over 10 minutes`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function main() {
  const force = process.argv.includes('--force');
  const want = inputsHash();
  if (!force && builtHash() === want) {
    console.log('dist/ is current');
    return;
  }
  await lock();
  try {
    if (!force && builtHash() === want) {
      console.log('dist/ is current (built meanwhile)');
      return;
    }
    const fresh = path.join(ROOT, `.dist-${process.pid}`);
    fs.rmSync(fresh, { recursive: true, force: true });
    try {
      execFileSync(
        process.execPath,
        [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', fresh],
        {
          cwd: ROOT,
          stdio: 'inherit',
        },
      );
    } catch {
      fs.rmSync(fresh, { recursive: true, force: true });
      throw new Error('tsc reported errors (above); dist/ is unchanged');
    }
    copyAssets(fresh);
    fs.writeFileSync(path.join(fresh, STAMP), `${want}\n`);
    // Two renames: dist/ is missing only between them, never partly written.
    const old = path.join(ROOT, `.dist-old-${process.pid}`);
    if (fs.existsSync(DIST)) fs.renameSync(DIST, old);
    fs.renameSync(fresh, DIST);
    fs.rmSync(old, { recursive: true, force: true });
    console.log('dist/ built');
  } finally {
    fs.rmSync(LOCK, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(`build failed: ${e.message}`);
    process.exit(1);
  });
}
