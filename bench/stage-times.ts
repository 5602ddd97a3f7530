// Reads a BENCH_DUMP file (bench/scenarios/latency.ts) and prints where the time between a
// credit change and its callback's settlement goes: each stage's p50/p90/p99/max, and the mean of
// each over the slowest 1 % of callbacks (API response → arrival at or past its p99).
//   node dist/bench/stage-times.js FILE [FROM_SECOND]   (FROM_SECOND: only callbacks due from then on)
import { readFileSync } from 'node:fs';
import { quantile } from './support/common.js';

/** From one column to the next, what the time between them is. */
const STAGES: [string, string, string][] = [
  ['due', 'responded', 'API request → response'],
  ['responded', 'admitted', 'response → ADMIT (commit, wake, pass, window)'],
  ['committed', 'admitted', 'tx start → ADMIT'],
  ['admitted', 'queued', 'ADMIT → job in Redis'],
  ['queued', 'picked', 'job in Redis → worker takes it'],
  ['picked', 'started', 'taken → attempt start (load, slot)'],
  ['started', 'arrived', 'attempt start → arrival'],
  ['arrived', 'settled', 'arrival → settlement statement'],
  ['settled', 'completed', 'settlement → job completed'],
  ['admitted', 'completed', 'cycle: ADMIT → job completed'],
  ['responded', 'arrived', 'latency: response → arrival'],
];

function main(): void {
  const [file, from = '0'] = process.argv.slice(2);
  if (!file) throw new Error('usage: node dist/bench/stage-times.js BENCH_DUMP_FILE [FROM_SECOND]');
  const lines = readFileSync(file, 'utf8').split('\n');
  const columns = lines[0].replace(/^#\s*/, '').split(' ');
  const at = (name: string) => columns.indexOf(name);
  let rows = lines
    .slice(1)
    .filter(Boolean)
    .map((l) => l.split(' ').map((v) => (v === '' ? NaN : Number(v))));
  const t0 = rows[0][at('due')];
  rows = rows.filter((r) => r[at('due')] - t0 >= Number(from) * 1000);
  const latency = (r: number[]) => r[at('arrived')] - r[at('responded')];
  const p99 = quantile(
    rows.map(latency).sort((a, b) => a - b),
    0.99,
  );
  const slowest = rows.filter((r) => latency(r) >= p99);
  console.log(
    `${rows.length} callbacks due from second ${from}; the slowest 1 %: ${slowest.length} (latency ≥ ${p99.toFixed(1)} ms)`,
  );
  console.log(
    `${'stage'.padEnd(46)} ${['p50', 'p90', 'p99', 'max', 'slow 1%'].map((h) => h.padStart(8)).join('')}   known`,
  );
  for (const [a, b, what] of STAGES) {
    const span = (r: number[]) => r[at(b)] - r[at(a)];
    const d = rows
      .map(span)
      .filter((v) => !Number.isNaN(v))
      .sort((x, y) => x - y);
    if (d.length === 0) continue;
    const slow = slowest.map(span).filter((v) => !Number.isNaN(v));
    const mean = slow.length ? slow.reduce((x, y) => x + y, 0) / slow.length : NaN;
    const figures = [quantile(d, 0.5), quantile(d, 0.9), quantile(d, 0.99), d[d.length - 1], mean]
      .map((v) => v.toFixed(1).padStart(8))
      .join('');
    console.log(`${what.padEnd(46)} ${figures}   ${d.length}`);
  }
  // The rest of a window slot's turn: from a job's completion (its settlements committed, admission
  // woken) to the next pass that admitted anything.
  const passes = [...new Set(rows.map((r) => r[at('admitted')]).filter((v) => !Number.isNaN(v)))].sort((x, y) => x - y);
  const refill = rows
    .map((r) => r[at('completed')])
    .filter((t) => !Number.isNaN(t))
    .map((t) => (passes.find((p) => p > t) ?? NaN) - t)
    .filter((v) => !Number.isNaN(v))
    .sort((x, y) => x - y);
  const figures = [0.5, 0.9, 0.99].map((q) => quantile(refill, q).toFixed(1).padStart(8)).join('');
  console.log(
    `${'job completed → next pass that admitted'.padEnd(46)} ${figures}${refill.length ? refill[refill.length - 1].toFixed(1).padStart(8) : ''}             ${refill.length}`,
  );
  console.log(
    `passes that admitted: ${passes.length}, ${(rows.length / Math.max(1, passes.length)).toFixed(1)} callbacks each`,
  );
}

main();
