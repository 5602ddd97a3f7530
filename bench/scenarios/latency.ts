// latency: API response → arrival at a fixed offered load, 0.25 × the baseline's rate unless
// BENCH_RATE says: one company per request, so each callback is matched to the API response that
// caused it.
import { writeFileSync } from 'node:fs';
import { RequestError } from 'got';
import { adminHeaders, envInt, figure, fmt, quantile, REDIS_URL, sleep, until } from '../support/common.js';
import { costWindow } from '../support/cost.js';
import { JobTap } from '../support/job-tap.js';
import { ScenarioResult } from '../support/results.js';
import { Ctx } from './context.js';

const RATE_SECONDS = 10;
const LATENCY_SHARE = 0.25; // the offered rate, as a share of the baseline's

export async function latencyScenario(ctx: Ctx): Promise<ScenarioResult> {
  const { pg, api, rx } = ctx;
  const rate = process.env.BENCH_RATE ? envInt('BENCH_RATE', 1) : Math.max(1, Math.round(LATENCY_SHARE * ctx.baseline));
  const n = rate * RATE_SECONDS;
  const ids = (
    await pg.query<{ id: string; name: string }>(
      `INSERT INTO companies (partner_id, name, currency, callback_url, credit_status)
       SELECT $1, 'L' || g, 'EUR', $2 || g, 'active' FROM generate_series(0, ${n - 1}) g RETURNING id, name`,
      [ctx.partnerId, ctx.target('/lat/')],
    )
  ).rows.sort((a, b) => Number(a.name.slice(1)) - Number(b.name.slice(1)));
  const responded = new Array<number>(n);
  const tap = process.env.BENCH_DUMP ? new JobTap(REDIS_URL, ctx.run.prefix) : null;
  await tap?.start();
  const cost = costWindow(ctx.run, 'callback', ctx.baselineClientCpuUs ?? NaN);
  const start = performance.now();
  const inflight: Promise<void>[] = [];
  const failures: string[] = [];
  for (let i = 0; i < n; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 0) await sleep(wait);
    // Settled at once, not only when the loop ends: a failed request is reported, not an
    // unhandled rejection that would end the bench.
    inflight.push(
      api
        .patch(`admin/v1/companies/${ids[i].id}/credit`, { headers: adminHeaders, json: { creditStatus: 'suspended' } })
        .then(
          () => {
            responded[i] = performance.now();
          },
          (e: RequestError) => {
            failures.push(`request ${i}: ${e.message}${e.response ? ` ${String(e.response.body).slice(0, 300)}` : ''}`);
          },
        ),
    );
  }
  await Promise.all(inflight);
  if (failures.length > 0) await tap?.stop();
  if (failures.length > 0)
    throw new Error(
      `bench: ${failures.length} of ${n} latency requests failed, e.g. ${failures.slice(0, 3).join('; ')}`,
    );
  await until(() => ids.every((_, i) => rx.arrivals.has(`/lat/${i}`)), 'latency callbacks');
  const latencies = ids.map((_, i) => rx.arrivals.get(`/lat/${i}`)! - responded[i]).sort((a, b) => a - b);
  const completed = n / ((performance.now() - start) / 1000); // requests answered and callbacks arrived, per second of the run
  const costs = await cost.close(n); // the service's CPU per change and its callback, at this offered rate
  if (tap) await settledThenStop(ctx, tap, n);
  if (tap)
    await dumpStages(ctx, process.env.BENCH_DUMP!, tap, ids.length, (i) => [
      start + (i * 1000) / rate,
      responded[i],
      rx.arrivals.get(`/lat/${i}`)!,
    ]);
  const p50 = quantile(latencies, 0.5);
  const p99 = quantile(latencies, 0.99);
  const share = rate / ctx.baseline;
  // A lower offered rate (BENCH_RATE) says nothing of the goal's.
  const atGoalRate = share >= LATENCY_SHARE * 0.99;
  return {
    scenario: 'latency',
    title: `one credit change per company at ${fmt(rate)}/s for ${RATE_SECONDS} s (${fmt(share, 2)}× baseline${process.env.BENCH_RATE ? ', BENCH_RATE' : ''})`,
    details: [`all answered and arrived at ${fmt(completed)}/s`],
    rows: [
      {
        measure: `API response → arrival at ${fmt(share, 2)}× baseline offered`,
        result: `p50 ${fmt(p50)} ms, p99 ${fmt(p99)} ms, max ${fmt(latencies[latencies.length - 1])} ms`,
        goal: 'p99 ≤ 60 ms at 0.25×',
        met: atGoalRate ? p99 <= 60 : null,
      },
      ...costs.rows,
    ],
    figures: {
      offeredPerSecond: rate,
      share: figure(share),
      completedPerSecond: figure(completed),
      p50Ms: figure(p50),
      p99Ms: figure(p99),
      maxMs: figure(latencies[latencies.length - 1]),
      ...costs.figures,
    },
  };
}

/** Every latency callback settled, and the tap's last events read: its jobs complete after their settlements. */
async function settledThenStop(ctx: Ctx, tap: JobTap, n: number): Promise<void> {
  const settled = async () =>
    Number(
      (
        await ctx.pg.query<{ n: string }>(
          `SELECT count(*) AS n FROM callbacks WHERE url LIKE '%/lat/%' AND status = 'delivered'`,
        )
      ).rows[0].n,
    );
  await until(async () => (await settled()) === n, 'latency callbacks settled');
  await sleep(300);
  await tap.stop();
}

/** BENCH_DUMP's columns, in order (bench/stage-times.ts reads them by these names). */
export const DUMP_COLUMNS = [
  'index',
  'due',
  'responded',
  'committed',
  'admitted',
  'queued',
  'picked',
  'started',
  'arrived',
  'settled',
  'completed',
];

/**
 * BENCH_DUMP=FILE: per latency callback, epoch ms (empty when unknown): its request's due time,
 * the API response, the callback row's transaction start (created_at), its ADMIT statement's
 * now() (the job's lease − the lease length), its job added to Redis, taken by a worker, the
 * attempt's start (callback_attempts.started_at), arrival at the receiver, the settlement
 * statement's start (delivered_at), its job completed (after every callback of the job settled
 * and committed). The job's times are BullMQ's events (JobTap). `node dist/bench/stage-times.js
 * FILE` prints each stage's percentiles.
 */
async function dumpStages(
  ctx: Ctx,
  file: string,
  tap: JobTap,
  n: number,
  times: (i: number) => [number, number, number],
): Promise<void> {
  const epoch = (t: number) => (performance.timeOrigin + t).toFixed(1);
  const stages = new Map(
    (
      await ctx.pg.query<{ id: string; url: string; created: string; started: string; settled: string }>(
        `SELECT c.id, c.url, extract(epoch FROM c.created_at) * 1000 AS created, extract(epoch FROM a.started_at) * 1000 AS started,
                extract(epoch FROM c.delivered_at) * 1000 AS settled
           FROM callbacks c JOIN callback_attempts a ON a.callback_id = c.id WHERE c.url LIKE '%/lat/%'`,
      )
    ).rows.map((r) => [r.url.slice(r.url.lastIndexOf('/') + 1), r]),
  );
  const lines = Array.from({ length: n }, (_, i) => {
    const st = stages.get(String(i));
    const job = st ? tap.of(st.id) : undefined;
    const [due, responded, arrived] = times(i);
    return [
      i,
      epoch(due),
      epoch(responded),
      st?.created,
      job?.admitted,
      job?.added,
      job?.active,
      st?.started,
      epoch(arrived),
      st?.settled,
      job?.completed,
    ].join(' ');
  });
  writeFileSync(file, `# ${DUMP_COLUMNS.join(' ')}\n${lines.join('\n')}\n`);
}
