import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const SCRIPT = path.join(__dirname, 'complete-lockfile.mjs');
const run = (...args: string[]) => spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8' });

/** A lockfile as `npm install` writes it from a Linux-only registry: the Linux x64 binaries only. */
function linuxOnlyLock() {
  return {
    name: 'fixture',
    lockfileVersion: 3,
    requires: true,
    packages: {
      '': { name: 'fixture', devDependencies: { '@swc/core': '1.16.22' }, dependencies: { msgpackr: '2.1.3' } },
      'node_modules/@swc/core': {
        version: '1.16.22',
        dev: true,
        optionalDependencies: {
          '@swc/core-darwin-arm64': '1.16.22',
          '@swc/core-linux-x64-gnu': '1.16.22',
          '@swc/core-win32-ia32-msvc': '1.16.22',
        },
      },
      'node_modules/@swc/core-linux-x64-gnu': {
        version: '1.16.22',
        cpu: ['x64'],
        dev: true,
        libc: ['glibc'],
        optional: true,
        os: ['linux'],
      },
      'node_modules/msgpackr': { version: '2.1.3', optionalDependencies: { 'msgpackr-extract': '^3.0.4' } },
      'node_modules/msgpackr-extract': {
        version: '3.0.7',
        optional: true,
        optionalDependencies: {
          '@msgpackr-extract/msgpackr-extract-linux-arm': '3.0.7',
          '@msgpackr-extract/msgpackr-extract-linux-x64': '3.0.7',
        },
      },
      'node_modules/@msgpackr-extract/msgpackr-extract-linux-x64': {
        version: '3.0.7',
        cpu: ['x64'],
        optional: true,
        os: ['linux'],
      },
      'node_modules/unrs-resolver': {
        version: '1.13.0',
        dev: true,
        optionalDependencies: { '@unrs/resolver-binding-linux-arm-musleabihf': '1.13.0' },
      },
    },
  };
}

describe('scripts/complete-lockfile.mjs', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lockfile-'));
    file = path.join(dir, 'package-lock.json');
    fs.writeFileSync(file, `${JSON.stringify(linuxOnlyLock(), null, 2)}\n`);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('--check fails naming each missing platform package, and changes nothing', () => {
    const before = fs.readFileSync(file, 'utf8');
    const res = run('--check', file);
    expect(res.status).toBe(1);
    expect(res.stderr).toContain('lacks 4 optional platform packages');
    for (const name of [
      '@swc/core-darwin-arm64@1.16.22',
      '@swc/core-win32-ia32-msvc@1.16.22',
      '@msgpackr-extract/msgpackr-extract-linux-arm@3.0.7',
      '@unrs/resolver-binding-linux-arm-musleabihf@1.13.0',
    ]) {
      expect(res.stderr).toContain(name);
    }
    expect(fs.readFileSync(file, 'utf8')).toBe(before);
  });

  it('adds each with the pinned version, optional, the platform its name says and its parent dev flag', () => {
    expect(run(file).status).toBe(0);
    const { packages } = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(packages['node_modules/@swc/core-darwin-arm64']).toEqual({
      version: '1.16.22',
      cpu: ['arm64'],
      dev: true,
      optional: true,
      os: ['darwin'],
    });
    expect(packages['node_modules/@swc/core-win32-ia32-msvc']).toEqual({
      version: '1.16.22',
      cpu: ['ia32'],
      dev: true,
      optional: true,
      os: ['win32'],
    });
    expect(packages['node_modules/@msgpackr-extract/msgpackr-extract-linux-arm']).toEqual({
      version: '3.0.7',
      cpu: ['arm'],
      optional: true,
      os: ['linux'],
    });
    expect(packages['node_modules/@unrs/resolver-binding-linux-arm-musleabihf']).toEqual({
      version: '1.13.0',
      cpu: ['arm'],
      dev: true,
      libc: ['musl'],
      optional: true,
      os: ['linux'],
    });
    // npm's order of locations, so the next `npm install` does not reshuffle the file
    const keys = Object.keys(packages);
    expect(keys.indexOf('node_modules/@msgpackr-extract/msgpackr-extract-linux-arm')).toBeLessThan(
      keys.indexOf('node_modules/@msgpackr-extract/msgpackr-extract-linux-x64'),
    );
    expect(keys[0]).toBe('');
  });

  it('is idempotent: a second run changes nothing and --check then passes', () => {
    run(file);
    const once = fs.readFileSync(file, 'utf8');
    expect(run(file).stdout).toContain('already lists every platform package');
    expect(fs.readFileSync(file, 'utf8')).toBe(once);
    expect(run('--check', file).status).toBe(0);
  });

  it('refuses a missing optional dependency it cannot pin (a range) instead of guessing', () => {
    const lock = linuxOnlyLock();
    delete (lock.packages as Record<string, unknown>)['node_modules/msgpackr-extract'];
    fs.writeFileSync(file, JSON.stringify(lock));
    const res = run(file);
    expect(res.status).toBe(1);
    expect(res.stderr).toContain('msgpackr-extract@^3.0.4');
  });

  it("the project's package-lock.json lists every platform package (npm ci accepts it on a fresh clone)", () => {
    expect(execFileSync(process.execPath, [SCRIPT, '--check'], { encoding: 'utf8' })).toContain(
      'lists every platform package',
    );
  });
});
