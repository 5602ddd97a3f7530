#!/usr/bin/env node
// Run after every dependency change: `node scripts/complete-lockfile.mjs`.
//
// The registry reachable where this project is developed serves Linux builds only, so `npm
// install` writes a package-lock.json without the other platforms' optional binaries
// (`@swc/core-darwin-arm64`, `@msgpackr-extract/*`, `@unrs/resolver-binding-*`, …), and `npm ci`
// then refuses the lockfile everywhere (`Missing: … from lock file`). This adds, for each
// optional dependency the lockfile lacks, the entry npm would have written: the version the
// parent pins, `"optional": true`, and the `os`/`cpu`/`libc` the package's name states, so npm
// skips it where it does not fit and fetches it by version where it does. Idempotent.
// `--check` changes nothing and exits 1 listing what is missing (CI runs it before `npm ci`).
// A path argument names another lockfile (the unit test's fixtures).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const OS = new Set([
  'aix',
  'android',
  'darwin',
  'freebsd',
  'linux',
  'netbsd',
  'openbsd',
  'openharmony',
  'sunos',
  'win32',
]);
const CPU = new Set(['arm', 'arm64', 'ia32', 'loong64', 'mips64el', 'ppc64', 'riscv64', 's390x', 'wasm32', 'x64']);
const LIBC = { gnu: 'glibc', glibc: 'glibc', gnueabihf: 'glibc', musl: 'musl', musleabihf: 'musl' };
/** Platform packages whose names do not say their platform. */
const KNOWN = { fsevents: { os: ['darwin'] } };

/** The os/cpu/libc fields for a platform package, read from its name; null when the name says nothing. */
export function platformOf(name) {
  if (KNOWN[name]) return KNOWN[name];
  const fields = {};
  for (const token of name.split('/').pop().split('-')) {
    if (OS.has(token)) fields.os = [token];
    else if (CPU.has(token)) fields.cpu = [token];
    else if (LIBC[token]) fields.libc = [LIBC[token]];
  }
  return fields.os || fields.cpu ? fields : null;
}

const EXACT = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

/** The entry a package at `from` would load for `name` (node_modules lookup, innermost first). */
function resolve(packages, from, name) {
  let base = from;
  for (;;) {
    const location = `${base ? `${base}/` : ''}node_modules/${name}`;
    if (packages[location]) return { location, entry: packages[location] };
    if (!base) return null;
    base = base.replace(/(^|\/)node_modules\/(@[^/]+\/)?[^/]+$/, '');
  }
}

/**
 * The entries to add so that every optional dependency in the lockfile resolves, keyed by
 * location. Throws when one cannot be written without the registry (a range instead of an
 * exact version, or a name that does not say its platform).
 */
export function missingEntries(lock) {
  const packages = lock.packages ?? {};
  const added = {};
  for (const [from, parent] of Object.entries(packages)) {
    if (parent.link) continue;
    for (const [name, spec] of Object.entries(parent.optionalDependencies ?? {})) {
      const found = resolve({ ...packages, ...added }, from, name);
      if (found && (!EXACT.test(spec) || found.entry.version === spec)) continue;
      if (!EXACT.test(spec))
        throw new Error(
          `${from || 'the project'} asks for ${name}@${spec}, which the lockfile lacks: install it or pin an exact version`,
        );
      const platform = platformOf(name);
      if (!platform)
        throw new Error(
          `${name}@${spec} (optional, of ${from}) is missing and its name does not say its platform: add it to KNOWN in ${path.basename(fileURLToPath(import.meta.url))}`,
        );
      // Hoisted where nothing else sits, as npm places it; beside its parent if another version does.
      const location = found ? `${from}/node_modules/${name}` : `node_modules/${name}`;
      added[location] = {
        version: spec,
        ...(platform.cpu && { cpu: platform.cpu }),
        ...(parent.dev && { dev: true }),
        ...(platform.libc && { libc: platform.libc }),
        optional: true,
        ...(platform.os && { os: platform.os }),
        ...(parent.peer && { peer: true }),
      };
    }
  }
  return added;
}

/** npm's own order of lockfile locations: the project first, then by locale comparison. */
function sortedPackages(packages) {
  const compare = new Intl.Collator('en').compare;
  const keys = Object.keys(packages).sort((a, b) => (a === '' ? -1 : b === '' ? 1 : compare(a, b)));
  return Object.fromEntries(keys.map((k) => [k, packages[k]]));
}

export function completeLockfile(lock) {
  const added = missingEntries(lock);
  if (Object.keys(added).length === 0) return { lock, added };
  return { lock: { ...lock, packages: sortedPackages({ ...lock.packages, ...added }) }, added };
}

function main() {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const file = process.argv.slice(2).find((a) => !a.startsWith('--')) ?? path.join(root, 'package-lock.json');
  const { lock, added } = completeLockfile(JSON.parse(fs.readFileSync(file, 'utf8')));
  const names = Object.entries(added).map(
    ([location, e]) => `${location.replace(/^.*node_modules\//, '')}@${e.version}`,
  );
  if (process.argv.includes('--check')) {
    if (names.length === 0) {
      console.log('package-lock.json lists every platform package');
      return;
    }
    console.error(
      `package-lock.json lacks ${names.length} optional platform packages (npm ci would refuse it):\n  ${names.join('\n  ')}\nRun: node scripts/complete-lockfile.mjs`,
    );
    process.exit(1);
  }
  if (names.length) fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(
    names.length
      ? `added ${names.length} optional platform packages to package-lock.json`
      : 'package-lock.json already lists every platform package',
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main();
  } catch (e) {
    console.error(e.message);
    process.exit(1);
  }
}
