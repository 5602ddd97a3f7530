import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** build.mjs's inputsHash() for a checkout at `root` (the script finds its inputs next to itself). */
function inputsHash(root: string): string {
  const script = path.join(root, 'scripts/build.mjs');
  return execFileSync(
    process.execPath,
    ['--input-type=module', '-e', `import { inputsHash } from ${JSON.stringify(script)}; console.log(inputsHash());`],
    { encoding: 'utf8' },
  ).trim();
}

describe('build.mjs inputs', () => {
  let root: string;
  const write = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  };

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'build-inputs-'));
    fs.mkdirSync(path.join(root, 'scripts'));
    fs.copyFileSync(path.join(__dirname, 'build.mjs'), path.join(root, 'scripts/build.mjs'));
    write('src/main.ts', 'export const a = 1;\n');
    write('bench/scenarios/backlog.ts', 'export const b = 1;\n');
    write('bench/results.json', '{"runs":[]}\n');
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('a bench run rewriting bench/results.json leaves dist/ current', () => {
    const before = inputsHash(root);
    write('bench/results.json', '{"runs":[{"scenario":"backlog"}]}\n');
    expect(inputsHash(root)).toBe(before);
  });

  it('a change to TypeScript under bench/ or src/ makes dist/ stale', () => {
    const before = inputsHash(root);
    write('bench/scenarios/backlog.ts', 'export const b = 2;\n');
    const afterBench = inputsHash(root);
    expect(afterBench).not.toBe(before);
    write('src/main.ts', 'export const a = 2;\n');
    expect(inputsHash(root)).not.toBe(afterBench);
  });
});
