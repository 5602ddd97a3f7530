import { ERROR_CODES } from '../src/platform/http/error-codes.js';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../src/platform/config/app-config.js';
import { parseDuration, parseDurationList } from '../src/platform/config/durations.js';
import type { ResultsFile } from '../bench/support/results.js';
import { TABLE_BEGIN, TABLE_END, withResults } from '../bench/support/table.js';
import { commandLines, DocBlock, docPages, fencedBlocks, ROOT } from './support/doc-blocks.js';

/**
 * What the README and docs/ say that can be checked without running anything: sizes, links,
 * blocks, the configuration table against the code, the benchmark commands against bench/. The
 * commands themselves run in test/readme.e2e-spec.ts.
 */
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const where = (b: DocBlock) => `${b.file}:${b.line}`;
/** The repository's text files (what a clone holds, without dependencies and build output), relative to ROOT. */
const sourceFiles = (dir: string): string[] =>
  readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const file = path.join(dir, e.name);
    if (e.isDirectory())
      return ['node_modules', 'dist', 'coverage', 'artifacts'].includes(e.name) ||
        e.name.startsWith('.dist') ||
        e.name === '.git'
        ? []
        : sourceFiles(file);
    return /\.(ts|js|mjs|json|md|yml)$|^(Dockerfile|run)$/.test(e.name) && e.name !== 'package-lock.json' ? [file] : [];
  });

/** Each page's budget in KB (1,024 bytes), and all of docs/ together: a page serves one reader, briefly. */
const BUDGET_KB: Record<string, number> = {
  'docs/architecture.md': 20,
  'docs/operations.md': 25,
  'docs/benchmarks.md': 12,
  'docs/partners.md': 40,
  'docs/security.md': 24,
  'docs/configuration.md': 14,
  'docs/development.md': 14,
};
const DOCS_BUDGET_KB = 140;

/**
 * A page's prose: its text with fenced blocks (examples: ids, timestamps and hashes of their own)
 * and the generated results table blanked, line for line, so a problem's line number is the page's.
 */
function prose(text: string): string {
  const blank = (part: string) => part.replace(/[^\n]/g, '');
  let out = text.replace(/^```[^\n]*\n[\s\S]*?^```\s*$/gm, blank);
  const begin = out.indexOf(TABLE_BEGIN);
  const end = out.indexOf(TABLE_END);
  if (begin >= 0 && end > begin) out = out.slice(0, begin) + blank(out.slice(begin, end)) + out.slice(end);
  return out;
}

/** What history looks like in a page: a commit, a session, a date, what the code was. */
const HISTORY: [RegExp, string][] = [
  [/\b(?!ed25519\b)(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b/, 'a commit hash'],
  [/\bthis session\b/i, '"this session"'],
  [/\b(?:the )?commit before\b/i, '"the commit before"'],
  [/\bfirst did\b/i, '"first did"'],
  [/(?<!\b(?:is|are|be|been|being|was|were)\s)\bused to\b/i, '"used to"'],
];
/** A date (2026-11-28) in prose; one inside inline code is an example value. */
const DATE = /\b20\d\d-[01]\d-[0-3]\d\b/;

/** Where a page's prose tells history, as `file:line: what`. */
function historyIn(file: string, text: string): string[] {
  return prose(text)
    .split('\n')
    .flatMap((line, i) => [
      ...HISTORY.filter(([re]) => re.test(line)).map(([, what]) => `${file}:${i + 1}: ${what}: ${line.trim()}`),
      ...(DATE.test(line.replace(/`[^`]*`/g, '')) ? [`${file}:${i + 1}: a date: ${line.trim()}`] : []),
    ]);
}

/**
 * The repository paths a page names (src/…, test/…, ops/…, bench/…, scripts/…) that do not exist:
 * a file (with an extension) must exist as named; a folder, a glob, or a jest selection (a path
 * without extension) must name something that does.
 */
function deadPaths(file: string, text: string): string[] {
  const problems: string[] = [];
  for (const [named] of text.matchAll(/(?<![\w./-])(?:src|test|ops|bench|scripts)\/[\w./*-]*[\w*]/g)) {
    const dir = path.join(ROOT, path.dirname(named));
    const base = path.basename(named);
    let found: boolean;
    if (named.includes('*')) {
      const glob = new RegExp(`^${base.replace(/[.]/g, '\\.').replace(/\*/g, '.*')}$`);
      found = existsSync(dir) && readdirSync(dir).some((f) => glob.test(f));
    } else if (/\.\w+$/.test(base)) found = existsSync(path.join(ROOT, named));
    else
      found =
        existsSync(path.join(ROOT, named)) || (existsSync(dir) && readdirSync(dir).some((f) => f.startsWith(base)));
    if (!found) problems.push(`${file}: names ${named}, which does not exist`);
  }
  return problems;
}

describe('the README and docs', () => {
  it('each page keeps to its budget, and docs/ together to theirs', () => {
    const pages = docPages().filter((f) => f !== 'README.md');
    const size = (file: string) => Buffer.byteLength(read(file));
    const over = pages
      .filter((f) => size(f) > (BUDGET_KB[f] ?? 0) * 1024)
      .map((f) => `${f}: ${size(f)} bytes, budget ${BUDGET_KB[f] ?? 0} KB`);
    expect(over).toEqual([]);
    expect(pages.reduce((n, f) => n + size(f), 0)).toBeLessThanOrEqual(DOCS_BUDGET_KB * 1024);
  });

  it('tells no history: no commit hash, session, date or what the code was, outside examples and the generated table', () => {
    expect(docPages().flatMap((f) => historyIn(f, read(f)))).toEqual([]);
  });

  it('names only paths of the repository that exist', () => {
    expect(docPages().flatMap((f) => deadPaths(f, read(f)))).toEqual([]);
  });

  it('the README is at most 8 KB and gives the two commands, the test command exactly as .ci/run runs it', () => {
    expect(Buffer.byteLength(read('README.md'))).toBeLessThanOrEqual(8192);
    const [commands] = fencedBlocks('README.md').filter((b) => b.lang === 'sh' && b.kind === '');
    expect(commandLines(commands.code)).toEqual(['npm ci && npm start', 'npm ci && npm test']);
    expect(
      read('.ci/run')
        .split('\n')
        .map((l) => l.trim()),
    ).toContain('npm ci && npm test');
  });

  it('every page says first what it is for, and links only to files in the repository', () => {
    const problems: string[] = [];
    for (const file of docPages().filter((f) => f !== 'README.md')) {
      const [, first] = /^# .+\n\n(.+)/.exec(read(file)) ?? [];
      if (!first?.startsWith('For ')) problems.push(`${file}: its first paragraph should say who it is for ("For …")`);
    }
    for (const file of docPages()) {
      for (const [, target] of read(file).matchAll(/\]\(([^)\s]+)\)/g)) {
        const local = path.resolve(path.dirname(path.join(ROOT, file)), target.replace(/#.*$/, ''));
        if (/^(\w+:|\/\/)/.test(target) || !local.startsWith(`${ROOT}/`) || !existsSync(local))
          problems.push(`${file}: a link outside the repository or to nothing: ${target}`);
      }
    }
    expect(problems).toEqual([]);
    expect(read('jest.config.js')).not.toMatch(/shared\//);
  });

  it('cites only documents in the repository, from code, tests, scripts and docs alike', () => {
    const own = new Set(sourceFiles('.').filter((f) => f.endsWith('.md')));
    const problems: string[] = [];
    for (const file of sourceFiles('.')) {
      const text = read(file);
      // A markdown file named anywhere must be one of ours: by its path, or its name among docs/.
      for (const [, cited] of text.matchAll(/([\w./-]*\w\.md)\b/g)) {
        const local = path.relative(ROOT, path.resolve(path.dirname(path.join(ROOT, file)), cited));
        if (!own.has(cited) && !own.has(local) && !own.has(`docs/${cited}`))
          problems.push(`${file}: cites ${cited}, not in the repository`);
      }
      // The team's spec folder beside the checkout is not in a clone.
      for (const [cited] of text.matchAll(/(?:\.\.\/|\/work\/)shared\b\S*/g))
        problems.push(`${file}: cites ${cited}, outside the repository`);
    }
    expect(problems).toEqual([]);
  });

  it('holds only blocks that something runs or checks', () => {
    // sh: run after the README's flow; sh dev: listed by jest; sh bench, deploy and deps: checked below.
    const known = new Set(['sh:', 'sh:dev', 'sh:bench', 'sh:deploy', 'sh:deps', 'text:', 'js:', 'python:', 'go:']);
    const unknown = docPages()
      .flatMap(fencedBlocks)
      .filter((b) => !known.has(`${b.lang}:${b.kind}`))
      .map((b) => `${where(b)}: \`${b.lang} ${b.kind}\``);
    expect(unknown).toEqual([]);
  });

  it('configuration.md names every variable the service reads, with the defaults the code has', () => {
    const source = read('src/platform/config/app-config.ts');
    const read_ = new Set([...source.matchAll(/\b(?:parse(?:<[^>]*>)?|get)\(\s*'([A-Z_]+)'/g)].map((m) => m[1]));
    read_.add('NODE_ENV');
    const page = read('docs/configuration.md');
    const rows = new Map([...page.matchAll(/^\| `([A-Z_]+)` \| ([^|]*) \|/gm)].map((m) => [m[1], m[2].trim()]));
    expect([...rows.keys()].sort()).toEqual([...read_].sort());

    const c = loadConfig({});
    const code = (v: string | number | boolean) => `\`${v}\``;
    const expected: Record<string, string> = {
      PORT: code(c.port),
      DATABASE_URL: code(c.databaseUrl),
      REDIS_URL: code(c.redisUrl),
      QUEUE_PREFIX: code(c.queuePrefix),
      ROLE: code(c.role),
      API_VARIANT: code(c.variant),
      CALLBACK_TIMEOUT_MS: code(c.callbackTimeoutMs),
      CALLBACK_CONNECT_TIMEOUT_MS: code(c.callbackConnectTimeoutMs),
      CALLBACK_CONCURRENCY: code(c.callbackConcurrency),
      CALLBACK_READY_WINDOW: code(c.callbackReadyWindow),
      CALLBACK_DESTINATION_CONCURRENCY: code(c.callbackDestinationConcurrency),
      CALLBACK_BREAKER_THRESHOLD: code(c.callbackBreakerThreshold),
      CALLBACK_ALLOW_HTTP: code(c.callbackAllowHttp),
      CALLBACK_ALLOW_PRIVATE_TARGETS: code(c.callbackAllowPrivateTargets),
      DASHBOARD_KEEP_COMPLETED: code(c.dashboardKeep.completed.count),
    };
    for (const [name, cell] of Object.entries(expected)) expect(`${name} ${rows.get(name)}`).toBe(`${name} ${cell}`);
    const unquote = (name: string) => /^`([^`]+)`$/.exec(rows.get(name) ?? '')?.[1] ?? `${name}: not one value`;
    expect(parseDurationList(unquote('CALLBACK_RETRY_SCHEDULE'))).toEqual(c.callbackRetryScheduleMs);
    expect(parseDuration(unquote('CALLBACK_RETENTION'))).toBe(c.callbackRetentionMs);
    expect(parseDuration(unquote('DASHBOARD_KEEP_COMPLETED_FOR'))).toBe(c.dashboardKeep.completed.ageMs);
    expect(
      unquote('CALLBACK_BREAKER_PROBE')
        .split('..')
        .map((d) => parseDuration(d)),
    ).toEqual([c.callbackBreakerProbeMs.first, c.callbackBreakerProbeMs.last]);
    // "Why the delivery defaults" names each default as the table does.
    for (const [, name, value] of page.matchAll(/\*\*`([A-Z_]+)=([^`]+)`\*\*/g))
      expect(`${name}=${value}`).toBe(`${name}=${unquote(name)}`);
  });

  it("benchmarks.md's commands name scripts, scenarios and variables that exist", () => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    const benchFiles = (dir: string): string[] =>
      readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? benchFiles(`${dir}/${e.name}`) : e.name.endsWith('.ts') ? [`${dir}/${e.name}`] : [],
      );
    const bench = benchFiles('bench').map(read).join('\n');
    const page = read('docs/benchmarks.md');
    const blocks = fencedBlocks('docs/benchmarks.md').filter((b) => b.kind === 'bench');
    expect(blocks.length).toBeGreaterThan(0);
    for (const line of blocks.flatMap((b) => commandLines(b.code))) {
      const m = /^((?:[A-Z_]+=\S+\s+)*)npm run (\S+)$/.exec(line);
      expect(`${line}: ${m && scripts[m[2]] ? 'a script' : 'no such npm script'}`).toBe(`${line}: a script`);
    }
    for (const [, name] of page.matchAll(/\b((?:BENCH|CAPACITY)_[A-Z_]+)/g))
      expect(`${name} in bench/: ${bench.includes(name)}`).toBe(`${name} in bench/: true`);
    // A scenario is a file of bench/scenarios/ that bench/bench.ts runs.
    const scenarios = [...page.matchAll(/BENCH_ONLY=([a-z,]+)/g), ...page.matchAll(/^\| `([a-z]+)` \|/gm)].flatMap(
      (m) => m[1].split(','),
    );
    expect(scenarios.length).toBeGreaterThan(0);
    for (const s of scenarios) {
      const runs =
        existsSync(path.join(ROOT, `bench/scenarios/${s}.ts`)) && read('bench/bench.ts').includes(`${s}Scenario`);
      expect(`scenario ${s}: ${runs ? 'bench/scenarios/ has it and bench/bench.ts runs it' : 'missing'}`).toBe(
        `scenario ${s}: bench/scenarios/ has it and bench/bench.ts runs it`,
      );
    }
    for (const [, variants] of page.matchAll(/BENCH_BACKLOG_VARIANTS=([a-z,]+)/g))
      for (const v of variants.split(',')) expect(read('bench/scenarios/backlog.ts')).toMatch(new RegExp(`\\b${v}: `));
    for (const part of page.matchAll(/CAPACITY_PARTS=([a-z,]+)/g))
      for (const p of part[1].split(',')) expect(bench).toContain(p);
  });

  it("benchmarks.md's one results table is the one generated from bench/results.json", () => {
    const page = read('docs/benchmarks.md');
    const results = JSON.parse(read('bench/results.json')) as ResultsFile;
    expect(page.split(TABLE_BEGIN)).toHaveLength(2);
    expect(withResults(page, results)).toBe(page);
    // Every result names a scenario of bench/scenarios/, and every goal has its verdict.
    for (const r of results.results) {
      expect(existsSync(path.join(ROOT, `bench/scenarios/${r.scenario}.ts`))).toBe(true);
      for (const row of r.rows) if (row.goal) expect([true, false, null]).toContain(row.met);
    }
    // No other table of results beside the generated one.
    const outside = page.slice(0, page.indexOf(TABLE_BEGIN)) + page.slice(page.indexOf(TABLE_END));
    expect(outside).not.toMatch(/^\|.*\bresults?\b.*\|$/m);
  });

  it('Docker commands are deployment only, and .ci/run checks the compose file they use', () => {
    const deploy = docPages()
      .flatMap(fencedBlocks)
      .filter((b) => b.kind === 'deploy');
    for (const line of deploy.flatMap((b) => commandLines(b.code)))
      expect(line).toMatch(/^(export \w+=|docker compose )/);
    expect(read('.ci/run')).toMatch(/^ADMIN_TOKEN=\S+ SECRETS_KEY=\S+ docker-compose config -q$/m);
  });

  it("the newcomer's PostgreSQL and Redis come from a compose file .ci/run checks, published on 127.0.0.1 only", () => {
    const deps = docPages()
      .flatMap(fencedBlocks)
      .filter((b) => b.kind === 'deps');
    expect(deps.length).toBeGreaterThan(0);
    for (const line of deps.flatMap((b) => commandLines(b.code)))
      expect(line).toBe('docker compose -f docker-compose.deps.yml up -d --wait');
    expect(read('.ci/run')).toMatch(/^docker-compose -f docker-compose\.deps\.yml config -q$/m);
    const published = [...read('docker-compose.deps.yml').matchAll(/^\s+- "([^"]+)"$/gm)].map((m) => m[1]);
    expect(published).toEqual(['127.0.0.1:5432:5432', '127.0.0.1:6379:6379']);
  });

  it('partners.md lists every error code with its meaning, as http/error-codes.ts has them', () => {
    const rows = [...read('docs/partners.md').matchAll(/^\| `([a-z_]+)` \| (.+) \|$/gm)].map((m) => [m[1], m[2]]);
    expect(Object.fromEntries(rows.filter(([c]) => c in ERROR_CODES))).toEqual(ERROR_CODES);
  });

  it("OpenAPI's description sends partners to docs/partners.md", () => {
    expect(read('src/platform/openapi/api-document.ts')).toContain('docs/partners.md');
    expect(existsSync(path.join(ROOT, 'docs/partners.md'))).toBe(true);
  });
});
