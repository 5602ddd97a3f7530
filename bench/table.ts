// npm run bench:table: rewrites docs/benchmarks.md's results table from the results file
// (bench/results.json, or BENCH_RESULTS) that npm run bench wrote.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ResultsFile } from './support/results.js';
import { withResults } from './support/table.js';

const ROOT = path.resolve(__dirname, '../..');
const results = path.resolve(process.env.BENCH_RESULTS ?? path.join(ROOT, 'bench/results.json'));
const page = path.join(ROOT, 'docs/benchmarks.md');

if (!existsSync(results)) {
  console.error(`bench:table: no ${results}: run npm run bench first`);
  process.exit(1);
}
const file = JSON.parse(readFileSync(results, 'utf8')) as ResultsFile;
const before = readFileSync(page, 'utf8');
const after = withResults(before, file);
writeFileSync(page, after);
console.log(
  `${path.relative(ROOT, page)}: ${after === before ? 'already current' : 'results table rewritten'} from ${path.relative(ROOT, results)} (${file.results.length} results)`,
);
