// storm: STORM_DEAD origins that accept and never answer and STORM_SLOW that answer 200 after
// STORM_SLOW_MS (each its own server, so its own destination), STORM_PER_ORIGIN pending callbacks
// each (one storm partner and company, rows inserted with SQL), beside the healthy partner at
// HEALTHY_RATE changes/s through the API for STORM_SECONDS; that load ran alone first, as long.
// The dead ones stay down until the healthy load is over, then all answer 204 at once.
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { envInt, figure, fmt, quantile, sleep } from '../support/common.js';
import { memoryReport, processMemory } from '../support/cost.js';
import { ScenarioResult } from '../support/results.js';
import {
  BODY,
  Ctx,
  HEALTHY_RATE,
  HEALTHY_WAIT_MS,
  healthyLine,
  healthyLoad,
  healthyMissingRow,
  healthySend,
  partnerWithCompany,
} from './context.js';

const STORM_DEAD = 50;
const STORM_SLOW = 3;
const STORM_PER_ORIGIN = 40;
export const STORM_SLOW_MS = 8_000;
const STORM_SECONDS = envInt('BENCH_STORM_SECONDS', 70); // the healthy load's length, alone and in the storm
const STORM_RECOVERY_MS = envInt('BENCH_STORM_RECOVERY_S', 300) * 1000; // how long to wait for the dead ones' callbacks

/**
 * A storm origin: `dead` accepts connections and never answers, `slow` answers 200 after
 * STORM_SLOW_MS. `recover()` makes either answer 204 at once, including the requests a dead one
 * holds whose connection is still open (the partner's process wakes up). Notes the connections
 * offered and, per webhook-id, when it was first answered with a 2xx on a live connection.
 */
export async function stormOrigin(kind: 'dead' | 'slow') {
  let connections = 0;
  let answering = false;
  let held = 0; // requests still open when it recovered, answered then
  let firstNew = NaN; // the first request made after it recovered
  const hanging = new Map<http.ServerResponse, () => void>();
  const timers = new Set<NodeJS.Timeout>();
  const answered = new Map<string, number>();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['webhook-id'] ?? req.url);
      const answer = (status: number) => {
        hanging.delete(res);
        if (res.writableEnded || !res.socket || res.socket.destroyed) return; // the sender gave up
        res.writeHead(status).end();
        if (!answered.has(id)) answered.set(id, performance.now());
      };
      if (answering) {
        if (Number.isNaN(firstNew)) firstNew = performance.now();
        return answer(204);
      }
      if (kind === 'slow') {
        const t = setTimeout(() => (timers.delete(t), answer(200)), STORM_SLOW_MS);
        timers.add(t);
        return;
      }
      hanging.set(res, () => answer(204));
      res.on('close', () => hanging.delete(res));
    });
  });
  server.on('connection', () => connections++);
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    answered,
    connections: () => connections,
    held: () => held,
    firstNew: () => firstNew,
    recover: () => {
      answering = true;
      held = hanging.size;
      for (const answer of [...hanging.values()]) answer();
    },
    close: () =>
      new Promise((r) => {
        timers.forEach(clearTimeout);
        hanging.forEach((_, res) => res.destroy());
        server.closeAllConnections();
        server.close(r);
      }),
  };
}

export async function stormScenario(ctx: Ctx): Promise<ScenarioResult> {
  const { pg } = ctx;
  // Unmeasured first (a fresh service's first second is JIT and first script loads), then alone.
  await healthyLoad(ctx, 'storm-warmup', HEALTHY_RATE, 5, HEALTHY_WAIT_MS);
  const alone = await healthyLoad(ctx, 'storm-alone', HEALTHY_RATE, STORM_SECONDS, HEALTHY_WAIT_MS);
  const dead = await Promise.all(Array.from({ length: STORM_DEAD }, () => stormOrigin('dead')));
  const slow = await Promise.all(Array.from({ length: STORM_SLOW }, () => stormOrigin('slow')));
  const origins = [...dead, ...slow];
  try {
    const storm = await partnerWithCompany(ctx.api, 'Storm', ctx.target('/storm-company'));
    await pg.query(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
       SELECT $1, $2, 0, ($3::text[])[1 + (g - 1) / ${STORM_PER_ORIGIN}] || '/storm/' || g, $4, 'pending', now()
         FROM generate_series(1, ${origins.length * STORM_PER_ORIGIN}) g`,
      [storm.partnerId, storm.companyId, origins.map((o) => o.url), BODY],
    );
    await pg.query(`SELECT pg_notify('funding_callbacks', '')`);
    const stormStart = performance.now();
    // The dead ones are down for as long as the healthy load runs; its callbacks are waited for
    // (at most HEALTHY_WAIT_MS) while theirs come in.
    const besideLoad = await healthySend(ctx, 'storm-beside', HEALTHY_RATE, STORM_SECONDS);
    const down = dead.map((o) => o.connections()).sort((a, b) => a - b);
    const downSeconds = (performance.now() - stormStart) / 1000;
    const recovered = performance.now();
    dead.forEach((o) => o.recover());
    const besideDone = besideLoad.wait(HEALTHY_WAIT_MS).then(() => besideLoad.arrivals());
    // Every waiting callback of the dead ones (and the slow ones') arrived, or the bound.
    const deadWanted = STORM_DEAD * STORM_PER_ORIGIN;
    const deadArrived = () => dead.reduce((n, o) => n + o.answered.size, 0);
    const slowArrived = () => slow.reduce((n, o) => n + o.answered.size, 0);
    const deadline = recovered + STORM_RECOVERY_MS;
    let nextReport = recovered + 30_000;
    while (
      (deadArrived() < deadWanted || slowArrived() < STORM_SLOW * STORM_PER_ORIGIN) &&
      performance.now() < deadline
    ) {
      await sleep(100);
      if (performance.now() >= nextReport) {
        console.log(
          `  storm: +${fmt((performance.now() - recovered) / 1000, 0)} s after recovery: ${fmt(deadArrived())} of ${fmt(deadWanted)} of the dead origins' callbacks and ${slowArrived()} of ${STORM_SLOW * STORM_PER_ORIGIN} of the slow ones' arrived`,
        );
        nextReport += 30_000;
      }
    }
    const beside = await besideDone;
    const besideAtEnd = besideLoad.arrivals();
    const endSeconds = (performance.now() - recovered) / 1000;
    const deadTimes = dead.flatMap((o) => [...o.answered.values()]);
    const last = deadTimes.length ? (Math.max(...deadTimes) - recovered) / 1000 : NaN;
    const first = deadTimes.length ? (Math.min(...deadTimes) - recovered) / 1000 : NaN;
    const allArrived = deadTimes.length === deadWanted;
    const firstNew = (Math.min(...dead.map((o) => o.firstNew()).filter((t) => !Number.isNaN(t))) - recovered) / 1000;
    const slowTimes = slow.flatMap((o) => [...o.answered.values()]);
    const statuses = (
      await pg.query<{ status: string; n: number }>(
        `SELECT status, count(*)::int AS n FROM callbacks WHERE partner_id = $1 GROUP BY status ORDER BY status`,
        [storm.partnerId],
      )
    ).rows.map((r) => `${r.status} ${fmt(r.n)}`);

    const p99Alone = quantile(alone.latencies, 0.99);
    const p99Beside = quantile(beside.latencies, 0.99);
    const maxDown = down[down.length - 1];
    const over = down.filter((c) => c > 10).length;
    const memory = memoryReport(await processMemory(ctx.run));
    return {
      scenario: 'storm',
      title: `${STORM_DEAD} dead origins (accept, never answer) + ${STORM_SLOW} slow (200 after ${STORM_SLOW_MS / 1000} s), ${STORM_PER_ORIGIN} pending callbacks each, beside a healthy partner at ${HEALTHY_RATE} changes/s for ${STORM_SECONDS} s`,
      details: [
        `healthy partner alone: ${healthyLine(alone)}`,
        `healthy partner in the storm: ${healthyLine(beside)}${besideAtEnd.latencies.length > beside.latencies.length ? ` within ${HEALTHY_WAIT_MS / 1000} s of its last request, ${besideAtEnd.latencies.length} by the end (+${fmt(endSeconds)} s after the dead ones recovered)` : ''}`,
        `connections offered per dead origin in ${fmt(downSeconds)} s down: min ${down[0]}, median ${quantile(down, 0.5)}, max ${maxDown}; total ${fmt(down.reduce((a, b) => a + b, 0))}`,
        `slow origins: connections ${slow.map((o) => o.connections()).join(', ')}; ${slowTimes.length} of ${STORM_SLOW * STORM_PER_ORIGIN} answered 200${slowTimes.length ? `, the last +${fmt((Math.max(...slowTimes) - stormStart) / 1000)} s after the storm began` : ''}`,
        `dead origins after they answer 204: ${dead.reduce((n, o) => n + o.held(), 0)} requests still held then answered at once; the first new request +${fmt(firstNew)} s; first callback +${fmt(first)} s`,
        `storm partner's callbacks in PostgreSQL at the end: ${statuses.join(', ')}`,
      ],
      rows: [
        {
          measure: 'healthy p99 alone → in the storm',
          result: `${fmt(p99Alone)} → ${fmt(p99Beside)} ms`,
          goal: '≤ alone + 100 ms',
          met: Number.isFinite(p99Beside) ? p99Beside <= p99Alone + 100 : null,
        },
        healthyMissingRow(beside),
        {
          measure: 'connections per dead origin while down, max',
          result: `${maxDown} in ${fmt(downSeconds)} s${over ? ` (${over} of ${STORM_DEAD} origins above 10)` : ''}`,
          goal: '≤ 10',
          met: maxDown <= 10,
        },
        {
          measure: `all ${fmt(deadWanted)} of the dead origins' callbacks arrived after recovery`,
          result: allArrived
            ? `+${fmt(last)} s`
            : `${fmt(deadTimes.length)} within ${fmt(STORM_RECOVERY_MS / 1000)} s (BENCH_STORM_RECOVERY_S)`,
          goal: '≤ 60 s',
          met: allArrived && last <= 60,
        },
        memory.row,
      ],
      figures: {
        p99AloneMs: figure(p99Alone),
        p99InStormMs: figure(p99Beside),
        healthyMissing: beside.missing,
        healthyFailed: beside.failed.length,
        maxConnectionsPerDeadOrigin: maxDown,
        deadArrived: deadTimes.length,
        deadWanted,
        lastAfterRecoverySeconds: allArrived ? figure(last) : null,
        ...memory.figures,
      },
    };
  } finally {
    await Promise.all(origins.map((o) => o.close()));
  }
}
