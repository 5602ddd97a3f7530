// isolation: a destination that accepts and never answers, with DEAD_BACKLOG pending callbacks,
// beside a healthy one changed HEALTHY_RATE times a second (one company per change). Healthy
// latency alone, then with the dead neighbour; the connections the dead one is offered while
// down; after it answers again, its first and last callback.
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { DEADLINE_MS, figure, fmt, quantile, until } from '../support/common.js';
import { memoryReport, processMemory } from '../support/cost.js';
import { ScenarioResult } from '../support/results.js';
import { BODY, Ctx, HEALTHY_RATE, HealthyArrivals, healthyLoad, pq } from './context.js';

const DEAD_BACKLOG = 2_000;
const HEALTHY_SECONDS = 20;

/**
 * A destination that accepts connections and never answers until `recover()`; counts the
 * connections it is offered and notes when each answered callback arrives.
 */
async function deadDestination() {
  let connections = 0;
  let answering = false;
  const hanging = new Set<http.ServerResponse>();
  const arrivals: number[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (!answering) return void hanging.add(res);
      arrivals.push(performance.now());
      res.writeHead(204).end();
    });
  });
  server.on('connection', () => connections++);
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    arrivals,
    connections: () => connections,
    recover: () => {
      answering = true;
    },
    close: () =>
      new Promise((r) => (hanging.forEach((h) => h.destroy()), server.closeAllConnections(), server.close(r))),
  };
}

export async function isolationScenario(ctx: Ctx): Promise<ScenarioResult> {
  const { pg } = ctx;
  const alone = await healthyLoad(ctx, 'alone', HEALTHY_RATE, HEALTHY_SECONDS, DEADLINE_MS);
  const dead = await deadDestination();
  try {
    await pg.query(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
       SELECT $1, $2, 0, $3 || g, $4, 'pending', now() FROM generate_series(1, ${DEAD_BACKLOG}) g`,
      [ctx.partnerId, ctx.companyId, `http://127.0.0.1:${dead.port}/dead/`, BODY],
    );
    await pg.query(`SELECT pg_notify('funding_callbacks', '')`);
    const outageStart = performance.now();
    const withDead = await healthyLoad(ctx, 'beside', HEALTHY_RATE, HEALTHY_SECONDS, DEADLINE_MS);
    // The outage lasts at least until the healthy run is over and the circuit has had time to
    // open and probe (the first attempts hang for CALLBACK_TIMEOUT_MS, 15 s by default).
    await until(() => performance.now() - outageStart > 40_000, 'the outage to last 40 s', 60_000);
    const downConnections = dead.connections();
    const downSeconds = (performance.now() - outageStart) / 1000;
    const recovered = performance.now();
    dead.recover();
    await until(
      async () =>
        Number(
          (
            await pg.query<{ n: string }>(
              `SELECT count(*) AS n FROM callbacks WHERE url LIKE '%/dead/%' AND status = 'delivered'`,
            )
          ).rows[0].n,
        ) >= DEAD_BACKLOG,
      'the dead backlog after recovery',
      300_000,
    );
    const firstAfter = (Math.min(...dead.arrivals) - recovered) / 1000;
    const lastAfter = (Math.max(...dead.arrivals) - recovered) / 1000;
    const afterProbe = (Math.max(...dead.arrivals) - Math.min(...dead.arrivals)) / 1000;
    const p99Alone = quantile(alone.latencies, 0.99);
    const p99Beside = quantile(withDead.latencies, 0.99);
    const memory = memoryReport(await processMemory(ctx.run));
    const missing = (r: HealthyArrivals) =>
      r.missing || r.failed.length
        ? ` (${r.missing} of ${r.accepted} missing, ${r.failed.length} requests failed)`
        : '';
    return {
      scenario: 'isolation',
      title: `a healthy destination at ${HEALTHY_RATE} changes/s for ${HEALTHY_SECONDS} s, alone, then beside a dead one (accepts, never answers) with ${fmt(DEAD_BACKLOG)} pending`,
      details: [
        `healthy alone: ${pq(alone.latencies)}${missing(alone)}`,
        `healthy beside the dead one: ${pq(withDead.latencies)}${missing(withDead)}`,
      ],
      rows: [
        {
          measure: 'healthy p99 alone → beside the dead one',
          result: `${fmt(p99Alone)} → ${fmt(p99Beside)} ms${withDead.missing ? ` (${withDead.missing} missing)` : ''}`,
          goal: '≤ alone + 100 ms, none missing',
          met: Number.isFinite(p99Beside) ? p99Beside <= p99Alone + 100 && withDead.missing === 0 : null,
        },
        {
          measure: 'connections offered to the dead one while down',
          result: `${downConnections} in ${fmt(downSeconds)} s`,
        },
        {
          measure: 'its backlog once it answers again',
          result: `first +${fmt(firstAfter)} s, last +${fmt(lastAfter)} s (${fmt(afterProbe)} s from the first successful probe)`,
        },
        memory.row,
      ],
      figures: {
        p99AloneMs: figure(p99Alone),
        p99BesideMs: figure(p99Beside),
        missing: withDead.missing,
        deadConnections: downConnections,
        downSeconds: figure(downSeconds),
        firstAfterRecoverySeconds: figure(firstAfter),
        lastAfterRecoverySeconds: figure(lastAfter),
        ...memory.figures,
      },
    };
  } finally {
    await dead.close();
  }
}
