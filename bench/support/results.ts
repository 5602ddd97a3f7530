// What a bench run found, printed as it goes and written to the results file (bench/results.json,
// or BENCH_RESULTS) that docs/benchmarks.md's table is generated from (npm run bench:table).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { withRedisOnce } from '../../src/platform/database/redis.js';
import { BASE_DB, figure, fmt, REDIS_URL } from './common.js';

const ROOT = resolve(__dirname, '../../..');
export const RESULTS_FILE = resolve(process.env.BENCH_RESULTS ?? join(ROOT, 'bench/results.json'));

/** One line of the results table: a figure, and where it is a goal's, the goal and its verdict (null: not measured). */
export interface Row {
  measure: string;
  result: string;
  goal?: string;
  met?: boolean | null;
}

/** What one scenario (or one variant of it) found. */
export interface ScenarioResult {
  scenario: string;
  variant?: string;
  /** What ran, with its sizes. */
  title: string;
  /** The lines printed beside the rows, in words. */
  details: string[];
  rows: Row[];
  /** The figures as numbers (rates per second, ms, µs, MB, counts), for comparing runs by program. */
  figures: Record<string, number | null>;
}

export interface Machine {
  cores: number;
  memoryGiB: number;
  cpu: string;
  postgres: string;
  autovacuum: string;
  redis: string;
}

/** The run a result came from: when, which code, where, against which baseline, with which settings. */
export interface RunInfo {
  date: string;
  commit: string;
  machine: Machine;
  baseline: number;
  /** The baseline got client's CPU µs per request, in a process of its own (absent in runs before it was measured). */
  baselineClientCpuUs?: number | null;
  processes: string;
  settings: string;
}

export interface ResultsFile {
  about: string;
  results: (ScenarioResult & { run: RunInfo })[];
}

const verdict = (met: boolean | null | undefined) => (met === null ? 'not measured' : met ? 'met' : 'NOT MET');

/** Collects the scenarios' results and prints each as it comes. */
export class Report {
  readonly results: ScenarioResult[] = [];

  add(result: ScenarioResult): void {
    this.results.push(result);
    console.log(`\n${result.scenario}${result.variant ? ` (${result.variant})` : ''}: ${result.title}`);
    for (const l of result.details) console.log(`  ${l}`);
    for (const r of result.rows) console.log(`  ${this.line(result, r)}`);
  }

  /** Every goal of the run again, together (a run of several scenarios). */
  printGoals(baseline: number): void {
    const goals = this.results.flatMap((s) => s.rows.filter((r) => r.goal).map((r) => this.line(s, r)));
    if (this.results.length < 2 || goals.length === 0) return;
    console.log(`\ngoals (baseline ${fmt(baseline)} req/s)`);
    for (const g of goals) console.log(`  ${g}`);
  }

  private line(s: ScenarioResult, r: Row): string {
    const name = `${s.scenario}${s.variant ? ` (${s.variant})` : ''}`;
    return `${name}: ${r.measure}: ${r.result}${r.goal ? `   goal ${r.goal}: ${verdict(r.met)}` : ''}`;
  }
}

function commit(): string {
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    const head = git('rev-parse', '--short=10', 'HEAD');
    // The results file is written by the runs themselves: a second scenario's run is still of HEAD's code.
    const changed = git(
      'status',
      '--porcelain',
      '--untracked-files=no',
      '--',
      'src',
      'bench',
      'package.json',
      'package-lock.json',
      ':(exclude)bench/results.json',
    );
    return changed ? `${head} with local changes` : head;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

/** This machine as the figures depend on it: cores, memory, and the servers' versions and autovacuum. */
async function machine(): Promise<Machine> {
  const pg = new Client({ connectionString: BASE_DB });
  await pg.connect();
  try {
    const { rows } = await pg.query<{ version: string; autovacuum: string }>(
      `SELECT current_setting('server_version') AS version, current_setting('autovacuum') AS autovacuum`,
    );
    const redis = await withRedisOnce(
      REDIS_URL,
      async (r) => /^redis_version:(\S+)/m.exec(await r.info('server'))?.[1] ?? 'unknown',
    );
    return {
      cores: os.cpus().length,
      memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
      cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
      postgres: String(rows[0].version),
      autovacuum: String(rows[0].autovacuum),
      redis,
    };
  } finally {
    await pg.end();
  }
}

export async function runInfo(
  baseline: number,
  baselineClientCpuUs: number,
  processes: string,
  settings: string,
): Promise<RunInfo> {
  const [date, round] = [new Date().toISOString(), (n: number) => Math.round(n * 10) / 10];
  return {
    date,
    commit: commit(),
    machine: await machine(),
    baseline: round(baseline),
    baselineClientCpuUs: figure(baselineClientCpuUs),
    processes,
    settings,
  };
}

/**
 * Writes this run's results into the results file `path`: they replace those of the same
 * scenarios there, the other scenarios' results stay (a run of some scenarios updates only
 * theirs), in `order`.
 */
export function writeResults(path: string, run: RunInfo, results: ScenarioResult[], order: readonly string[]): void {
  const ran = new Set(results.map((r) => r.scenario));
  const kept = existsSync(path)
    ? (JSON.parse(readFileSync(path, 'utf8')) as ResultsFile).results.filter((r) => !ran.has(r.scenario))
    : [];
  const all = [...kept, ...results.map((r) => ({ ...r, run }))].sort(
    (a, b) => order.indexOf(a.scenario) - order.indexOf(b.scenario),
  );
  const file: ResultsFile = {
    about:
      "Written by npm run bench (each run replaces its scenarios); docs/benchmarks.md's results table is generated from it by npm run bench:table.",
    results: all,
  };
  writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`);
}
