// npm run bench: the service (ROLE=all, compiled; BENCH_SPLIT=1: ROLE=api + ROLE=worker) in child
// processes against the local PostgreSQL and Redis, receivers on 127.0.0.1, and this process
// driving load. Loopback only; every loop is bounded in count and time. docs/benchmarks.md says
// what each scenario measures and its goal; each is a file of bench/scenarios/.
//
// Scenarios, in this order; BENCH_ONLY=<name>[,<name>…] runs only those (the baseline always
// runs): 'drain', 'api', 'latency', 'isolation', 'storm' share one service and database;
// 'backlog' and 'outage' have their own for each of their variants. The results go to
// bench/results.json (BENCH_RESULTS=FILE: elsewhere), replacing those of the scenarios that ran.
import { arrivalReceiver } from './receivers.js';
import { apiClient, fmt } from './support/common.js';
import { Report, RESULTS_FILE, runInfo, ScenarioResult, writeResults } from './support/results.js';
import { runMain, ServiceRun, SETTINGS, SPLIT } from './support/service.js';
import { peakRssMb } from './support/system.js';
import { apiScenario } from './scenarios/api.js';
import { backlogScenario, backlogVariants } from './scenarios/backlog.js';
import { baselineScenario } from './scenarios/baseline.js';
import { Ctx, partnerWithCompany } from './scenarios/context.js';
import { drainScenario, drainSchemes } from './scenarios/drain.js';
import { isolationScenario } from './scenarios/isolation.js';
import { latencyScenario } from './scenarios/latency.js';
import { outageScenario, outageVariants } from './scenarios/outage.js';
import { stormScenario } from './scenarios/storm.js';

const SHARED = {
  drain: drainScenario,
  api: apiScenario,
  latency: latencyScenario,
  isolation: isolationScenario,
  storm: stormScenario,
} as const;
const SCENARIOS = [...(Object.keys(SHARED) as (keyof typeof SHARED)[]), 'backlog', 'outage'] as const;
const ONLY = (process.env.BENCH_ONLY ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const selected = (s: string) => ONLY.length === 0 || ONLY.includes(s);

async function main(): Promise<void> {
  const unknown = ONLY.filter((s) => !(SCENARIOS as readonly string[]).includes(s));
  if (unknown.length)
    throw new Error(`bench: BENCH_ONLY names ${unknown.join(', ')}; the scenarios are ${SCENARIOS.join(', ')}`);
  const variants = selected('backlog') ? backlogVariants() : [];
  if (selected('drain')) drainSchemes();
  const outages = selected('outage') ? outageVariants() : [];
  const rx = await arrivalReceiver();
  const target = (p: string) => `http://127.0.0.1:${rx.port}${p}`;
  const report = new Report();
  try {
    const { rate: baseline, clientCpuUs } = await baselineScenario(target);
    const processes = SPLIT ? 'two service processes, ROLE=api and ROLE=worker' : 'one service process ROLE=all';
    const info = await runInfo(baseline, clientCpuUs, processes, SETTINGS);
    // Written after each scenario: a later one's failure does not lose the figures before it.
    const add = (result: ScenarioResult) => (
      report.add(result),
      writeResults(RESULTS_FILE, info, report.results, SCENARIOS)
    );
    console.log(
      `funding-service callback benchmark (loopback, ${processes}; settings given to the service: ${SETTINGS}, the rest its defaults)`,
    );
    console.log(`  bare got POST loop (baseline, 64 in flight)  ${fmt(baseline)} req/s`);
    console.log(`  got's client in that loop, in a process of its own: ${fmt(clientCpuUs)} µs CPU per request`);

    const shared = (Object.keys(SHARED) as (keyof typeof SHARED)[]).filter(selected);
    if (shared.length) {
      const run = new ServiceRun();
      try {
        await run.start();
        const api = apiClient(run.port);
        const { partnerId, companyId } = await partnerWithCompany(api, 'Bench', target('/company'));
        const ctx: Ctx = { run, pg: run.pg!, api, rx, target, partnerId, companyId, baseline };
        ctx.baselineClientCpuUs = clientCpuUs;
        for (const name of shared) for (const result of [await SHARED[name](ctx)].flat()) add(result);
        const rss = run.pids().map((p) => fmt(peakRssMb(p)));
        console.log(
          `\n  peak RSS of the service process${SPLIT ? 'es' : ''} over ${shared.join(', ')}: ${rss.join(' MB (api), ')} MB${SPLIT ? ' (worker)' : ''}`,
        );
      } finally {
        await run.cleanup();
      }
    }
    for (const variant of variants) add(await backlogScenario(baseline, variant));
    for (const deadOrigins of outages) add(await outageScenario(baseline, rx, deadOrigins));

    report.printGoals(baseline);
    console.log(`\nresults in ${RESULTS_FILE}; npm run bench:table puts them in docs/benchmarks.md`);
  } finally {
    await rx.close();
  }
}

runMain('bench', main);
