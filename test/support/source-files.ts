import { readdirSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './doc-blocks.js';

/** The TypeScript source files under `dir` (relative to the repository), unit specs left out. */
export const sources = (dir: string): string[] =>
  readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sources(`${dir}/${e.name}`)
      : e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts')
        ? [`${dir}/${e.name}`]
        : [],
  );
