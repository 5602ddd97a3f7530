import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { costReport, serviceCpuUs, withDescendants } from '../bench/support/cost.js';
import { ResultsFile, RunInfo, ScenarioResult, writeResults } from '../bench/support/results.js';
import type { ServiceRun } from '../bench/support/service.js';
import { renderResults, TABLE_BEGIN, TABLE_END, withResults } from '../bench/support/table.js';

/** The bench's results file and the table docs/benchmarks.md shows of it (docs.spec.ts checks the page against the file). */
const run = (commit: string, baseline: number): RunInfo => ({
  date: '2026-11-25T21:00:00.000Z',
  commit,
  machine: {
    cores: 2,
    memoryGiB: 23.5,
    cpu: 'AMD EPYC',
    postgres: '15.20 (Debian 15.20-0+deb12u1)',
    autovacuum: 'off',
    redis: '7.0.15',
  },
  baseline,
  processes: 'one service process ROLE=all',
  settings: 'none',
});
const result = (scenario: string, rate: string, met: boolean | null, variant?: string): ScenarioResult => ({
  scenario,
  variant,
  title: `${scenario} title`,
  details: [],
  rows: [
    { measure: 'rate', result: rate, goal: '≥ 0.6×', met },
    { measure: 'CPU | per callback', result: '400 µs' },
  ],
  figures: { ratio: 0.5 },
});
const ORDER = ['drain', 'api', 'backlog'];

describe('the bench results file', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'bench-results-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as ResultsFile;

  it('a run replaces the results of the scenarios it ran, keeps the others, in the bench order', () => {
    const file = path.join(dir, 'results.json');
    writeResults(
      file,
      run('aaa', 3000),
      [result('backlog', '1/s', false, 'one destination'), result('drain', '2/s', true)],
      ORDER,
    );
    expect(read(file).results.map((r) => `${r.scenario} ${r.run.commit}`)).toEqual(['drain aaa', 'backlog aaa']);
    writeResults(file, run('bbb', 3100), [result('api', '3/s', true)], ORDER);
    writeResults(
      file,
      run('ccc', 3200),
      [result('backlog', '4/s', true, 'one destination'), result('backlog', '5/s', true, '10 destinations')],
      ORDER,
    );
    expect(
      read(file).results.map((r) => `${r.scenario} ${r.variant ?? ''} ${r.run.commit} ${r.rows[0].result}`),
    ).toEqual(['drain  aaa 2/s', 'api  bbb 3/s', 'backlog one destination ccc 4/s', 'backlog 10 destinations ccc 5/s']);
  });

  it('the table: the run with its machine and baseline, then one row per figure with the goal and its verdict', () => {
    const table = renderResults({
      about: '',
      results: [{ ...result('drain', '2,000/s = 0.6×', true), run: run('abc1234', 3403.14) }],
    });
    expect(table.split('\n')).toEqual([
      'Run on 2026-11-25, commit `abc1234`; 2 cores (AMD EPYC), 23.5 GiB, PostgreSQL 15.20 (autovacuum off), Redis 7.0.15; one service process ROLE=all, settings given to the service: none; baseline (bare `got` POST loop, 64 in flight) 3,403.1 req/s.',
      '',
      '| scenario | measure | result | goal |',
      '|---|---|---|---|',
      '| `drain` | what ran | drain title | |',
      '| `drain` | rate | 2,000/s = 0.6× | ≥ 0.6×: met |',
      '| `drain` | CPU \\| per callback | 400 µs | |',
    ]);
  });

  it('results of several runs: each run listed with its scenarios, each row naming its run; verdicts not met or not measured stand out', () => {
    const table = renderResults({
      about: '',
      results: [
        { ...result('drain', '1/s', false), run: run('aaa', 3000) },
        { ...result('backlog', '2/s', null, 'one destination'), run: run('bbb', 3100) },
      ],
    });
    expect(table).toMatch(
      /^Runs:\n1\. 2026-11-25, commit `aaa`;.* 3,000 req\/s \(drain\)\n2\. .*commit `bbb`;.* 3,100 req\/s \(backlog\)\n/,
    );
    expect(table).toContain('| `drain` (run 1) | rate | 1/s | ≥ 0.6×: **NOT MET** |');
    expect(table).toContain('| `backlog`, one destination (run 2) | rate | 2/s | ≥ 0.6×: not measured |');
  });

  it("a run that measured got's client names its CPU per request beside the baseline; an older run's file reads as before", () => {
    const measured = { ...run('abc1234', 3403.14), baselineClientCpuUs: 512.34 };
    const table = renderResults({ about: '', results: [{ ...result('drain', '1/s', true), run: measured }] });
    expect(table.split('\n')[0]).toMatch(/ 3,403\.1 req\/s, got's client 512\.3 µs CPU per request\.$/);
  });

  it('a cost: the service CPU per callback beside the client CPU per request and their ratio; each process held to 256 MB at its peak', () => {
    const memory = [
      { role: 'api', rssMb: 120, peakRssMb: 130, heapMb: 40 },
      { role: 'worker', rssMb: 230, peakRssMb: 257, heapMb: NaN },
    ];
    const { rows, figures } = costReport('callback', 1_600_000, 2_000, 400, memory);
    expect(rows.map((r) => `${r.measure}: ${r.result}${r.goal ? `; goal ${r.goal}: ${String(r.met)}` : ''}`)).toEqual([
      "CPU per callback: service (all its processes and threads) / got's client per baseline request: 800 µs / 400 µs = 2×",
      'service memory per process: RSS (peak since start) / live heap: api 120 (130) / 40 MB; worker 230 (257) / n/a MB; goal peak ≤ 256 MB each: false',
    ]);
    expect(figures).toEqual({
      serviceCpuUsPerCallback: 800,
      baselineClientCpuUs: 400,
      cpuRatio: 2,
      ...{
        apiRssMb: 120,
        apiPeakRssMb: 130,
        apiHeapMb: 40,
        workerRssMb: 230,
        workerPeakRssMb: 257,
        workerHeapMb: null,
      },
    });
    expect(costReport('callback', 1, 1, 1, []).rows[1].met).toBe(false);
  });

  it("a process's descendants are the service's too (a process it starts counts in its CPU)", async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 10000)'], { stdio: 'ignore' });
    try {
      expect(withDescendants([process.pid])).toEqual(expect.arrayContaining([process.pid, child.pid]));
      expect(withDescendants([child.pid!])).toEqual([child.pid]);
      const run = { pids: () => [process.pid] } as ServiceRun;
      const before = serviceCpuUs(run);
      const spent = process.cpuUsage();
      while (process.cpuUsage(spent).user < 50_000) Math.sqrt(Math.random()); // 50 ms of CPU: five ticks
      expect(serviceCpuUs(run)).toBeGreaterThan(before);
    } finally {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill();
      await exited;
    }
  });

  it('the page: only the block between the markers is rewritten, and markers missing or repeated are an error', () => {
    const file: ResultsFile = { about: '', results: [] };
    const page = `# B\n\nbefore\n${TABLE_BEGIN}\nold table\n${TABLE_END}\nafter\n`;
    expect(withResults(page, file)).toBe(
      `# B\n\nbefore\n${TABLE_BEGIN}\n${renderResults(file)}\n${TABLE_END}\nafter\n`,
    );
    expect(withResults(withResults(page, file), file)).toBe(withResults(page, file));
    expect(() => withResults('# B\n', file)).toThrow(/markers/);
    expect(() => withResults(`${page}${TABLE_BEGIN}\n`, file)).toThrow(/markers/);
  });
});
