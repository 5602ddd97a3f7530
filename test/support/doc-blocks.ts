import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '../..');

/**
 * A fenced code block of a page. `kind` says who runs it (the word after the language):
 * - `sh` alone: run by test/readme.e2e-spec.ts, after the README's flow, with its variables;
 * - `sh dev`: a test command, its selection listed by jest (test/readme.e2e-spec.ts);
 * - `sh bench`: a benchmark command, checked against bench/ and package.json (docs.spec.ts);
 * - `sh deploy`: Docker only, checked by .ci/run (`docker-compose config`).
 */
export interface DocBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  kind: string;
  code: string;
}

export function docPages(): string[] {
  return [
    'README.md',
    ...readdirSync(path.join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => `docs/${f}`),
  ];
}

export function fencedBlocks(file: string): DocBlock[] {
  const lines = readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S+)(?:[ \t]+(\S+))?\s*$/.exec(lines[i]);
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    if (end < 0) throw new Error(`${file}:${i + 1}: a fence that never closes`);
    blocks.push({ file, line: i + 1, lang: open[1], kind: open[2] ?? '', code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return blocks;
}

/** A block's command lines: comments and blank lines dropped, trailing comments cut, continuations joined. */
export function commandLines(code: string): string[] {
  return code
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((l) => l.replace(/\s+#\s.*$/, '').trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}
