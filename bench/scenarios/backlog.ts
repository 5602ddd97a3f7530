// backlog: BENCH_BACKLOG_ROWS pending callbacks inserted while the service is stopped (it created
// the schema, the partner and the company on a first start), then one VACUUM ANALYZE, as a
// deployment's autovacuum would have done while they piled up; then the service starts and
// drains them. Nothing vacuums or analyzes for it during the drain: what it gets is what a
// deployment with this PostgreSQL server's settings gets. Two variants, each on a database of its
// own (BENCH_BACKLOG_VARIANTS picks): `one`, every callback to one destination (a big partner's
// day-long outage), and `spread`, evenly over BENCH_BACKLOG_ORIGINS destinations.
import { loopbackReceivers } from '../receivers.js';
import { apiClient, envInt, figure, fmt, mb, sleep } from '../support/common.js';
import { RSS_LIMIT_MB } from '../support/cost.js';
import { ScenarioResult } from '../support/results.js';
import { ServiceRun, SPLIT } from '../support/service.js';
import { memorySampler, peakRssMb } from '../support/system.js';
import { BODY, delivered, partnerWithCompany } from './context.js';

const BACKLOG_ROWS = envInt('BENCH_BACKLOG_ROWS', 1_000_000);
const BACKLOG_ORIGINS = envInt('BENCH_BACKLOG_ORIGINS', 10);
const VARIANTS = { one: 1, spread: BACKLOG_ORIGINS } as const;
type Variant = keyof typeof VARIANTS;
const INSERT_CHUNK = 250_000;
const STALL_MS = 120_000; // no new callback for this long ends the wait
const RATE_GOAL = 0.6; // × baseline
const REDIS_LIMIT = 100 * 1024 * 1024;

/** The variants BENCH_BACKLOG_VARIANTS names (default both), checked before anything runs. */
export function backlogVariants(): Variant[] {
  const named = (process.env.BENCH_BACKLOG_VARIANTS ?? 'one,spread')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = named.filter((v) => !(v in VARIANTS));
  if (unknown.length || named.length === 0)
    throw new Error(
      `bench: BENCH_BACKLOG_VARIANTS names ${unknown.join(', ') || 'nothing'}; the variants are ${Object.keys(VARIANTS).join(', ')}`,
    );
  return named as Variant[];
}

/**
 * Partner endpoints answering 204, one destination each; counts requests and distinct
 * webhook-ids, and notes when each distinct one first arrived (in arrival order).
 */
async function backlogReceivers(origins: number, expected: number) {
  const ids = new Set<string>();
  const times = new Float64Array(expected);
  let requests = 0;
  const receivers = await loopbackReceivers(origins, (req) => {
    // Only the backlog's callbacks count (not, say, one about the company itself).
    if (!req.url?.startsWith('/backlog/')) return;
    requests++;
    const id = String(req.headers['webhook-id'] ?? req.url);
    if (!ids.has(id)) {
      if (ids.size < expected) times[ids.size] = performance.now();
      ids.add(id);
    }
  });
  return {
    ports: receivers.ports,
    urls: receivers.urls(),
    distinct: () => ids.size,
    requests: () => requests,
    /** When the k-th distinct callback (0-based) arrived. */
    at: (k: number) => times[k],
    close: receivers.close,
  };
}

export async function backlogScenario(baseline: number, variant: Variant): Promise<ScenarioResult> {
  const n = BACKLOG_ROWS;
  const origins = VARIANTS[variant];
  // Past three times what the rate goal allows (10 minutes at least), the goal is missed by far:
  // the run ends there with the figures so far.
  const deadlineMs = Math.max(600_000, (3 * n * 1000) / (RATE_GOAL * baseline));
  const run = new ServiceRun();
  const rxs = await backlogReceivers(origins, n);
  const samples = memorySampler(run);
  try {
    await run.start();
    const { partnerId, companyId } = await partnerWithCompany(apiClient(run.port), 'Backlog', `${rxs.urls[0]}/company`);
    await run.stop();
    const pg = run.pg!;
    const t0 = performance.now();
    for (let lo = 1; lo <= n; lo += INSERT_CHUNK) {
      const hi = Math.min(n, lo + INSERT_CHUNK - 1);
      await pg.query(
        `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
         SELECT $1, $2, 0, ($3::text[])[1 + g % cardinality($3::text[])] || '/backlog/' || g, $4, 'pending', now()
           FROM generate_series($5::int, $6::int) g`,
        [partnerId, companyId, rxs.urls, BODY, lo, hi],
      );
    }
    const inserted = (performance.now() - t0) / 1000;
    // Once, before the start: the visibility map and statistics a real backlog would have had by
    // then. None during the drain (autovacuum does that, where the server runs it).
    await pg.query('VACUUM ANALYZE');

    const redisBefore = await samples.redisNow();
    samples.start(redisBefore);
    const started = performance.now();
    await run.start();
    const ready = performance.now();
    await samples.sample();

    const deadline = Date.now() + deadlineMs;
    let lastCount = 0;
    let lastProgress = Date.now();
    let nextTenth = 1;
    let ended = 'all arrived';
    while (rxs.distinct() < n) {
      await sleep(200);
      const now = Date.now();
      if (rxs.distinct() !== lastCount) {
        lastCount = rxs.distinct();
        lastProgress = now;
      } else if (now - lastProgress > STALL_MS) {
        ended = `stalled: nothing new for ${STALL_MS / 1000} s`;
        break;
      }
      if (now > deadline) {
        ended = `ended after ${fmt(deadlineMs / 1000, 0)} s, 3× the time the rate goal allows`;
        break;
      }
      while (nextTenth < 10 && lastCount >= (n * nextTenth) / 10) {
        console.log(
          `  backlog (${variant}): ${nextTenth * 10} % (${fmt(lastCount)}) at +${fmt((performance.now() - ready) / 1000)} s; Redis peak ${mb(samples.redisPeak())}, service RSS peak ${run
            .pids()
            .map((p) => fmt(samples.rssPeak(p)))
            .join(' / ')} MB`,
        );
        nextTenth++;
      }
    }
    const arrived = rxs.distinct();
    // Recorded as delivered too (bounded), and a moment for duplicates to show up.
    const dbDeadline = Date.now() + 60_000;
    let dbDelivered = await delivered(pg);
    while (dbDelivered < arrived && Date.now() < dbDeadline) {
      await sleep(1000);
      dbDelivered = await delivered(pg);
    }
    await sleep(2000);
    await samples.sample();
    const [{ vacuums, analyzes }] = (
      await pg.query<{ vacuums: string; analyzes: string }>(
        `SELECT coalesce(autovacuum_count, 0) AS vacuums, coalesce(autoanalyze_count, 0) AS analyzes FROM pg_stat_user_tables WHERE relname = 'callbacks'`,
      )
    ).rows;
    const rss = run.pids().map((p) => Math.max(samples.rssPeak(p) || 0, peakRssMb(p) || 0));

    const k10 = Math.ceil(n / 10);
    const k90 = Math.floor((n * 9) / 10);
    const firstRate = arrived >= k10 && k10 > 1 ? (k10 - 1) / ((rxs.at(k10 - 1) - rxs.at(0)) / 1000) : NaN;
    const lastRate = arrived >= n && n - k90 > 1 ? (n - k90 - 1) / ((rxs.at(n - 1) - rxs.at(k90)) / 1000) : NaN;
    // All of them, or (ended early) those that arrived, from ready to the last.
    const overall = arrived > 0 ? arrived / ((rxs.at(arrived - 1) - ready) / 1000) : NaN;
    const duplicates = rxs.requests() - arrived;
    const roles = SPLIT ? ['api', 'worker'] : ['all'];
    const redisPeak = samples.redisPeak();
    const redisDelta = redisPeak - redisBefore;
    const finished = arrived === n;
    return {
      scenario: 'backlog',
      variant: variant === 'one' ? 'one destination' : `${origins} destinations`,
      title: `${fmt(n)} pending callbacks inserted before the service started, ${origins === 1 ? 'to one healthy destination' : `spread evenly over ${origins} healthy destinations (${fmt(n / origins)} each)`}; one VACUUM ANALYZE before the start, none during`,
      details: [
        `inserted in ${fmt(inserted)} s (INSERT … SELECT generate_series, ${Math.ceil(n / INSERT_CHUNK)} statements; then VACUUM ANALYZE)`,
        `service ready ${fmt((ready - started) / 1000)} s after its start; first callback +${arrived ? fmt((rxs.at(0) - ready) / 1000) : 'n/a'} s, ${ended}${arrived ? `, the last +${fmt((rxs.at(arrived - 1) - ready) / 1000)} s` : ''}`,
        `autovacuum on callbacks meanwhile (the server's own): ${vacuums} VACUUM, ${analyzes} ANALYZE`,
        `Redis used_memory (INFO memory, each second; Redis is shared, so the absolute value counts every user's keys): ${mb(redisBefore)} before the service started`,
        `service RSS peak (VmRSS each second, VmHWM at the end): ${rss.map((r, i) => `${fmt(r)} MB (${roles[i]})`).join(', ')}`,
      ],
      rows: [
        {
          measure: 'arrived / twice or more / delivered in PostgreSQL',
          result: `${fmt(arrived)} of ${fmt(n)} / ${fmt(duplicates)} / ${fmt(dbDelivered)}`,
          goal: 'all, none twice',
          met: finished && duplicates === 0 && dbDelivered >= n,
        },
        {
          measure: finished
            ? 'drain rate, ready to the last'
            : `drain rate of the ${fmt(arrived)} that arrived (${ended})`,
          result: `${fmt(overall)}/s = ${fmt(overall / baseline, 2)}× baseline`,
          goal: '≥ 0.6× (aim 0.9×)',
          met: Number.isFinite(overall) ? finished && overall / baseline >= RATE_GOAL : null,
        },
        {
          measure: 'last 10 % against the first 10 %',
          result: finished
            ? `${fmt(lastRate)} vs ${fmt(firstRate)}/s = ${fmt(lastRate / firstRate, 2)}×`
            : `first 10 % ${fmt(firstRate)}/s; the last 10 % never came`,
          goal: '≥ 0.8×',
          met: finished ? (Number.isFinite(lastRate / firstRate) ? lastRate / firstRate >= 0.8 : null) : false,
        },
        {
          measure: 'Redis used_memory peak over its start (absolute: Redis is shared)',
          result: `${mb(redisDelta)} (${mb(redisPeak)})`,
          goal: '≤ 100 MB',
          met: redisDelta <= REDIS_LIMIT,
        },
        {
          measure: 'service RSS peak',
          result: rss.map((r) => `${fmt(r)} MB`).join(' / '),
          goal: `≤ ${RSS_LIMIT_MB} MB`,
          met: rss.every((r) => r > 0 && r <= RSS_LIMIT_MB),
        },
      ],
      figures: {
        callbacks: n,
        destinations: origins,
        arrived,
        duplicates,
        delivered: dbDelivered,
        callbacksPerSecond: figure(overall),
        ratio: figure(overall / baseline),
        firstTenthPerSecond: figure(firstRate),
        lastTenthPerSecond: figure(lastRate),
        redisPeakMb: figure(redisPeak / 2 ** 20),
        redisDeltaMb: figure(redisDelta / 2 ** 20),
        serviceRssPeakMb: figure(Math.max(...rss)),
        autovacuums: Number(vacuums),
        autoanalyzes: Number(analyzes),
      },
    };
  } finally {
    samples.stop();
    await run.cleanup();
    await rxs.close();
  }
}
