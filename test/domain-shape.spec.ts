import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ErrorCode } from '../src/platform/http/error-codes.js';
import { ROOT } from './support/doc-blocks.js';
import { sources } from './support/source-files.js';

/** What keeps the domain's code in one shape, read from the source (the behaviour is in the e2e tests). */
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const DOMAIN = [
  'src/funding/companies',
  'src/funding/limit-requests',
  'src/funding/withdrawals',
  'src/funding/loans',
  'src/funding/domain',
];

describe('the shape of the domain code', () => {
  it('gives every refusal a code from http/error-codes.ts, never a literal', () => {
    const literal = sources('src').flatMap((file) =>
      [...read(file).matchAll(/new DomainError\(\s*'\w+',\s*['`]([^'`]*)/g)].map((m) => `${file}: ${m[1]}`),
    );
    expect(literal).toEqual([]);
    const codes = Object.values(ErrorCode);
    expect(new Set(codes).size).toBe(codes.length);
    // The contract's style (§1): snake_case, e.g. insufficient_credit_balance.
    for (const code of codes) expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
  });

  it('exports nothing from a domain service file but its class and types', () => {
    const exported = DOMAIN.flatMap(sources)
      .filter((f) => f.endsWith('.service.ts'))
      .flatMap((file) =>
        [...read(file).matchAll(/^export (?:async )?(?:function|const|let) (\w+)/gm)].map((m) => `${file}: ${m[1]}`),
      );
    expect(exported).toEqual([]);
  });

  it('steers no domain call with a boolean parameter', () => {
    const flags = DOMAIN.flatMap(sources).flatMap((file) =>
      [...read(file).matchAll(/\(([^()]*\b\w+\??\s*(?::\s*boolean\b|=\s*(?:true|false)\b)[^()]*)\)/g)].map(
        (m) => `${file}: (${m[1]})`,
      ),
    );
    expect(flags).toEqual([]);
  });
});
