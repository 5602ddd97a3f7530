// api: concurrent credit-limit changes through the API over 64 companies (changes of one company
// serialise on its row lock, as they must), each committing callbacks 0 and 2, delivered end to end.
import { adminHeaders, figure, fmt, pool, until } from '../support/common.js';
import { ScenarioResult } from '../support/results.js';
import { costWindow, withDescendants } from '../support/cost.js';
import { cpuUsed, roundTrips } from '../support/system.js';
import { Ctx } from './context.js';

const API_CHANGES = 10_000;
/** The rate goal of callbacks delivered end to end, as a share of the baseline's (issue 60). */
const API_GOAL = 0.5;

export async function apiScenario(ctx: Ctx): Promise<ScenarioResult> {
  const { pg, api, rx } = ctx;
  const spread = (
    await pg.query<{ id: string }>(
      `INSERT INTO companies (partner_id, name, currency, callback_url, credit_status)
       SELECT $1, 'T' || g, 'EUR', $2, 'active' FROM generate_series(1, 64) g RETURNING id`,
      [ctx.partnerId, ctx.target('/company')],
    )
  ).rows.map((r) => r.id);
  const before = rx.count();
  // The service's processes and those they started, at each end (as the cost window counts them).
  const cpuBefore = cpuUsed(withDescendants(ctx.run.pids()));
  const cost = costWindow(ctx.run, 'callback', ctx.baselineClientCpuUs ?? NaN);
  const tripsBefore = await roundTrips(pg);
  const t0 = performance.now();
  await pool(API_CHANGES, 64, async (i) => {
    await api.patch(`admin/v1/companies/${spread[i % 64]}/credit`, {
      headers: adminHeaders,
      json: { creditLimit: String(1000 + i) },
    });
  });
  const apiDone = performance.now();
  await until(() => rx.count() >= before + 2 * API_CHANGES, 'API-driven callbacks');
  const rate = (2 * API_CHANGES) / ((performance.now() - t0) / 1000);
  const [cpuAfter, tripsAfter] = [cpuUsed(withDescendants(ctx.run.pids())), await roundTrips(pg)];
  const costs = await cost.close(2 * API_CHANGES);
  const changes = API_CHANGES / ((apiDone - t0) / 1000);
  const r = rate / ctx.baseline;
  const per = (n: number) => n / API_CHANGES;
  const cpu = {
    service: per(cpuAfter.service - cpuBefore.service),
    redis: per(cpuAfter.redis - cpuBefore.redis),
    postgres: per(cpuAfter.postgres - cpuBefore.postgres),
  };
  const trips = {
    postgres: per(tripsAfter.postgres - tripsBefore.postgres),
    redis: per(tripsAfter.redis - tripsBefore.redis),
  };
  return {
    scenario: 'api',
    title: `${fmt(API_CHANGES)} credit-limit changes over 64 companies, 64 in flight (callbacks 0 and 2 each)`,
    details: [],
    rows: [
      {
        measure: 'callbacks delivered end to end',
        result: `${fmt(rate)}/s = ${fmt(r, 2)}× baseline`,
        goal: `≥ ${API_GOAL}×`,
        met: r >= API_GOAL,
      },
      ...costs.rows,
      { measure: 'API changes accepted', result: `${fmt(changes)}/s` },
      {
        measure: 'CPU per change and its two callbacks: service / Redis / PostgreSQL',
        result: `${fmt(cpu.service)} / ${fmt(cpu.redis)} / ${fmt(cpu.postgres)} µs`,
      },
      {
        measure: 'round trips per change: PostgreSQL transactions / Redis commands',
        result: `${fmt(trips.postgres, 2)} / ${fmt(trips.redis, 2)}`,
      },
    ],
    figures: {
      changes: API_CHANGES,
      callbacksPerSecond: figure(rate),
      ratio: figure(r),
      changesPerSecond: figure(changes),
      serviceCpuUs: figure(cpu.service),
      redisCpuUs: figure(cpu.redis),
      postgresCpuUs: figure(cpu.postgres),
      postgresTransactions: figure(trips.postgres),
      redisCommands: figure(trips.redis),
      ...costs.figures,
    },
  };
}
