// outage: the storm at scale. For each count of BENCH_OUTAGE_ORIGINS (100 and 1,000 unless it
// says), on a service and database of its own: that many dead origins (accept, never answer; in
// processes of their own, each on its own loopback address: support/dead-origins.ts) and 3 slow
// ones (200 after 8 s), BENCH_OUTAGE_PER_ORIGIN pending callbacks each (rows inserted with
// SQL), beside a healthy partner at HEALTHY_RATE changes/s for BENCH_OUTAGE_DOWN_S (default
// BENCH_OUTAGE_SECONDS) that first ran alone for BENCH_OUTAGE_SECONDS. Then the dead ones answer 204 again, and every callback they held is waited for
// (at most BENCH_OUTAGE_RECOVERY_S) while the healthy partner goes on at the same rate. Admission's passes and the index entries they read are
// counted in each phase (support/admission-counts.ts): counts, which the machine's load does not
// change, beside the times; so are the circuits opened, and each process's memory.
import { Client } from 'pg';
import { apiClient, envInt, figure, fmt, mb, quantile, sleep } from '../support/common.js';
import { admissionCounts, describePerPass, perPass } from '../support/admission-counts.js';
import { ScenarioResult } from '../support/results.js';
import { ServiceRun } from '../support/service.js';
import { memorySampler } from '../support/system.js';
import { callbackOrigin, destinationKey } from '../../src/callbacks/callback-destination.js';
import { deadOrigins } from '../support/dead-origins.js';
import { memoryLines, serviceHeapMb } from '../support/process-memory.js';
import { ArrivalReceiver } from '../receivers.js';
import {
  BODY,
  Ctx,
  HEALTHY_RATE,
  HEALTHY_WAIT_MS,
  healthyLine,
  healthyLoad,
  healthyMissingRow,
  healthySend,
  healthyStages,
  partnerWithCompany,
} from './context.js';
import { STORM_SLOW_MS, stormOrigin } from './storm.js';

const PER_ORIGIN = envInt('BENCH_OUTAGE_PER_ORIGIN', 1_000);
const SECONDS = envInt('BENCH_OUTAGE_SECONDS', 60); // the healthy load's length alone
/** How long the dead origins stay down, the healthy load beside them (BENCH_OUTAGE_DOWN_S; 300 shows the circuits' goal). */
const DOWN_SECONDS = envInt('BENCH_OUTAGE_DOWN_S', SECONDS);
const SLOW = 3;
/** The recovery's goal: every held callback delivered at this share of the baseline's rate at least (within 60 s at the least). */
const RECOVERY_SHARE = 0.5;
const RECOVERY_MIN_S = 60;
const MAX_CONNECTIONS = 10;
const REDIS_LIMIT = 100 * 1024 * 1024;
const INSERT_CHUNK = 250_000;

/** The dead-origin counts BENCH_OUTAGE_ORIGINS names (default 100 and 1,000), each a run of its own, checked before anything runs. */
export function outageVariants(): number[] {
  const named = (process.env.BENCH_OUTAGE_ORIGINS ?? '100,1000')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (named.length === 0 || named.some((s) => !/^[1-9]\d*$/.test(s)))
    throw new Error(
      `bench: BENCH_OUTAGE_ORIGINS must list positive integers, got "${process.env.BENCH_OUTAGE_ORIGINS}"`,
    );
  return named.map(Number);
}

export async function outageScenario(
  baseline: number,
  rx: ArrivalReceiver,
  deadCount: number,
): Promise<ScenarioResult> {
  const run = new ServiceRun('outage');
  const samples = memorySampler(run);
  const dead = await deadOrigins(deadCount);
  const slow = await Promise.all(Array.from({ length: SLOW }, () => stormOrigin('slow')));
  const urls = [...dead.urls, ...slow.map((o) => o.url)];
  const held = urls.length * PER_ORIGIN;
  const deadWanted = deadCount * PER_ORIGIN;
  const recoveryRate = RECOVERY_SHARE * baseline;
  const goalSeconds = Math.max(RECOVERY_MIN_S, deadWanted / recoveryRate);
  const recoveryBoundMs = envInt('BENCH_OUTAGE_RECOVERY_S', Math.ceil(2 * goalSeconds)) * 1000;
  const tag = `outage${deadCount}`;
  try {
    await run.start();
    const api = apiClient(run.port);
    const pg = run.pg!;
    const target = (p: string) => `http://127.0.0.1:${rx.port}${p}`;
    const healthy = await partnerWithCompany(api, 'Bench', target('/company'));
    const ctx: Ctx = { run, pg, api, rx, target, ...healthy, baseline };
    // Unmeasured first (a fresh service's first second is JIT and first script loads), then alone.
    await healthyLoad(ctx, `${tag}-warmup`, HEALTHY_RATE, 5, HEALTHY_WAIT_MS);
    const alone = await healthyLoad(ctx, `${tag}-alone`, HEALTHY_RATE, SECONDS, HEALTHY_WAIT_MS);

    const storm = await partnerWithCompany(api, 'Outage', target('/outage-company'));
    const redisBefore = await samples.redisNow();
    samples.start(redisBefore);
    // The storm begins with the first rows: admission sends them as they commit.
    const stormAt = await pgNow(pg);
    const insertStart = performance.now();
    for (let lo = 1; lo <= held; lo += INSERT_CHUNK) {
      await pg.query(
        `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
         SELECT $1, $2, 0, ($3::text[])[1 + (g - 1) / ${PER_ORIGIN}] || '/outage/' || g, $4, 'pending', now()
           FROM generate_series($5::int, $6::int) g`,
        [storm.partnerId, storm.companyId, urls, BODY, lo, Math.min(held, lo + INSERT_CHUNK - 1)],
      );
      await pg.query(`SELECT pg_notify('funding_callbacks', '')`);
    }
    const inserted = (performance.now() - insertStart) / 1000;

    // The dead ones are down for as long as the healthy load runs beside them.
    const stormStart = performance.now();
    const atStorm = await admissionCounts(api, pg);
    const besideLoad = await healthySend(ctx, `${tag}-beside`, HEALTHY_RATE, DOWN_SECONDS);
    const atRecovery = await admissionCounts(api, pg);
    const heapInOutage = await serviceHeapMb(api);
    await dead.refresh();
    const down = dead.connections().sort((a, b) => a - b);
    const keys = dead.urls.map((u) => destinationKey(storm.partnerId, callbackOrigin(u)));
    const opened = await openedBy(pg, keys, stormAt);
    const downSeconds = (performance.now() - stormStart) / 1000;
    const recovered = performance.now();
    const recoveredAt = Date.now();
    await dead.recover();
    const besideDone = besideLoad.wait(HEALTHY_WAIT_MS).then(() => besideLoad.arrivals());
    const deadArrived = () => dead.arrived();
    // The healthy partner goes on changing while the dead ones' backlog drains, and stops with it.
    const drained = () => deadArrived() >= deadWanted || performance.now() >= recovered + recoveryBoundMs;
    const afterSent = healthySend(ctx, `${tag}-after`, HEALTHY_RATE, Math.ceil(recoveryBoundMs / 1000), drained);

    const slowArrived = () => slow.reduce((n, o) => n + o.answered.size, 0);
    let nextReport = recovered + 30_000;
    while (deadArrived() < deadWanted && performance.now() < recovered + recoveryBoundMs) {
      await sleep(200);
      if (performance.now() >= nextReport) {
        console.log(
          `  outage (${deadCount} dead): +${fmt((performance.now() - recovered) / 1000, 0)} s after recovery: ${fmt(deadArrived())} of ${fmt(deadWanted)} of the dead origins' callbacks arrived`,
        );
        nextReport += 30_000;
      }
    }
    const recoverySeconds = (performance.now() - recovered) / 1000;
    await dead.refresh();
    const atEnd = await admissionCounts(api, pg);
    const beside = await besideDone;
    const afterLoad = await afterSent;
    await afterLoad.wait(HEALTHY_WAIT_MS);
    const afterRecovery = afterLoad.arrivals();
    const stagesBeside = await healthyStages(ctx, `${tag}-beside`);
    const stagesAfter = await healthyStages(ctx, `${tag}-after`);
    await samples.sample();
    const arrived = deadArrived();
    const allArrived = arrived === deadWanted;
    const lastAfter = allArrived ? (dead.lastArrivedAt() - recoveredAt) / 1000 : NaN;
    const memory = memoryLines(run, samples, dead.memory(), heapInOutage, await serviceHeapMb(api));
    const rate = allArrived ? deadWanted / lastAfter : arrived / recoverySeconds;
    const statuses = (
      await pg.query<{ status: string; n: number }>(
        `SELECT status, count(*)::int AS n FROM callbacks WHERE partner_id = $1 GROUP BY status ORDER BY status`,
        [storm.partnerId],
      )
    ).rows.map((r) => `${r.status} ${fmt(r.n)}`);

    const p99Alone = quantile(alone.latencies, 0.99);
    const p99Beside = quantile(beside.latencies, 0.99);
    const p99After = quantile(afterRecovery.latencies, 0.99);
    const maxDown = down[down.length - 1];
    const redisDelta = samples.redisPeak() - redisBefore;
    const storming = perPass(atStorm, atRecovery);
    const recovering = perPass(atRecovery, atEnd);
    return {
      scenario: 'outage',
      variant: `${fmt(deadCount)} dead origins`,
      title: `${fmt(deadCount)} dead origins (accept, never answer) + ${SLOW} slow (200 after ${STORM_SLOW_MS / 1000} s), ${fmt(PER_ORIGIN)} pending callbacks each, beside a healthy partner at ${HEALTHY_RATE} changes/s (${SECONDS} s alone, ${DOWN_SECONDS} s beside them)`,
      details: [
        `${fmt(held)} callbacks inserted in ${fmt(inserted)} s while the service ran`,
        `healthy partner alone: ${healthyLine(alone)}`,
        `healthy partner in the outage: ${healthyLine(beside)}`,
        `connections offered per dead origin in ${fmt(downSeconds)} s down: min ${down[0]}, median ${quantile(down, 0.5)}, max ${maxDown}`,
        `dead origins' circuits open ${fmt(downSeconds)} s into the outage: ${fmt(opened.open)} of ${fmt(deadCount)}, the last +${fmt(opened.lastS)} s after the storm began`,
        ...memory.details,
        `healthy partner while the backlog drains after recovery: ${healthyLine(afterRecovery)}`,
        `healthy partner's time in the outage: ${stagesBeside}; after recovery: ${stagesAfter}`,
        `in the outage: ${describePerPass(atStorm, atRecovery, downSeconds)}`,
        `after recovery: ${describePerPass(atRecovery, atEnd, recoverySeconds)}`,
        `dead origins after they answer 204: ${dead.held()} requests still held then answered at once; the slow ones' callbacks answered: ${fmt(slowArrived())} of ${fmt(SLOW * PER_ORIGIN)}`,
        `storm partner's callbacks in PostgreSQL at the end: ${statuses.join(', ')}`,
      ],
      rows: [
        {
          measure: 'healthy p99 alone → in the outage',
          result: `${fmt(p99Alone)} → ${fmt(p99Beside)} ms`,
          goal: '≤ alone + 100 ms',
          met: Number.isFinite(p99Beside) ? p99Beside <= p99Alone + 100 : false,
        },
        healthyMissingRow(beside),
        {
          measure: 'healthy p99 alone → while the backlog drains',
          result: `${fmt(p99Alone)} → ${fmt(p99After)} ms`,
          goal: '≤ alone + 100 ms',
          met: Number.isFinite(p99After) ? p99After <= p99Alone + 100 : false,
        },
        healthyMissingRow(afterRecovery, 'the drain'),
        {
          measure: 'connections per dead origin while down, max',
          result: `${maxDown} in ${fmt(downSeconds)} s`,
          goal: `≤ ${MAX_CONNECTIONS}`,
          met: maxDown <= MAX_CONNECTIONS,
        },
        {
          measure: 'dead origins open (time after the storm began)',
          result: `${fmt(opened.open)} of ${fmt(deadCount)}${opened.open > 0 ? ` (the last +${fmt(opened.lastS)} s)` : ''}`,
          goal: '≤ 300 s',
          met: opened.open === deadCount && opened.lastS <= 300,
        },
        memory.row,
        {
          measure: 'Redis used_memory peak over its start (absolute: Redis is shared)',
          result: `${mb(redisDelta)} (${mb(samples.redisPeak())})`,
          goal: '≤ 100 MB',
          met: redisDelta <= REDIS_LIMIT,
        },
        {
          measure: `all ${fmt(deadWanted)} of the dead origins' callbacks arrived after recovery`,
          result: allArrived
            ? `+${fmt(lastAfter)} s (${fmt(rate)}/s)`
            : `${fmt(arrived)} within ${fmt(recoverySeconds)} s (${fmt(rate)}/s)`,
          goal: `≤ ${fmt(goalSeconds)} s (≥ ${RECOVERY_SHARE}× baseline = ${fmt(recoveryRate)}/s)`,
          met: allArrived && lastAfter <= goalSeconds,
        },
      ],
      figures: {
        deadOrigins: deadCount,
        perOrigin: PER_ORIGIN,
        p99AloneMs: figure(p99Alone),
        p99InOutageMs: figure(p99Beside),
        healthyMissing: beside.missing,
        p50AfterRecoveryMs: figure(quantile(afterRecovery.latencies, 0.5)),
        p99AfterRecoveryMs: figure(p99After),
        healthyMissingAfterRecovery: afterRecovery.missing,
        healthyFailed: beside.failed.length,
        maxConnectionsPerDeadOrigin: maxDown,
        deadOpen: opened.open,
        lastOpenedSeconds: figure(opened.lastS),
        ...memory.figures,
        redisDeltaMb: figure(redisDelta / 2 ** 20),
        deadArrived: arrived,
        deadWanted,
        lastAfterRecoverySeconds: figure(lastAfter),
        recoveryPerSecond: figure(rate),
        passesInOutage: storming.passes,
        admissionIndexReadPerPassInOutage: figure(storming.admissionOrder),
        passesAfterRecovery: recovering.passes,
        admissionIndexReadPerPassAfterRecovery: figure(recovering.admissionOrder),
      },
    };
  } finally {
    samples.stop();
    await Promise.all([dead.close(), ...slow.map((o) => o.close())]);
    await run.cleanup();
  }
}

/** PostgreSQL's clock now (epoch ms): the destinations' opened_at is on it. */
async function pgNow(pg: Client): Promise<number> {
  return (await pg.query<{ t: number }>(`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS t`)).rows[0]
    .t;
}

/** Of these destinations, how many are open, and the last opening's time after `since` (s). */
async function openedBy(pg: Client, keys: string[], since: number): Promise<{ open: number; lastS: number }> {
  const { rows } = await pg.query<{ open: number; last: number | null }>(
    `SELECT count(opened_at)::int AS open, (extract(epoch FROM max(opened_at)) * 1000)::float8 AS last FROM destinations WHERE key = ANY($1::text[])`,
    [keys],
  );
  return { open: rows[0].open, lastS: rows[0].last === null ? NaN : (rows[0].last - since) / 1000 };
}
