// What the scenarios on the shared service use: its API, database and receiver, and the load of
// a healthy partner (isolation, storm).
import { Got } from 'got';
import { Client } from 'pg';
import { ArrivalReceiver } from '../receivers.js';
import { adminHeaders, fmt, quantile, sleep } from '../support/common.js';
import { ServiceRun } from '../support/service.js';

export interface Ctx {
  run: ServiceRun;
  pg: Client;
  api: Got;
  rx: ArrivalReceiver;
  target: (p: string) => string;
  partnerId: string;
  companyId: string;
  baseline: number;
  /** The baseline got client's CPU µs per request (scenarios/baseline.ts); a run of a scenario's own may leave it out. */
  baselineClientCpuUs?: number;
}

/** The body of a callback row inserted with SQL. */
export const BODY = JSON.stringify({
  message: 0,
  withdrawalId: null,
  companyId: 'x',
  limitRequestId: null,
  loanId: null,
});
/** Changes per second to a healthy destination (isolation, storm). */
export const HEALTHY_RATE = 10;

/** A partner (of the default signature scheme unless given), and a company of it whose own callbacks go to `callbackUrl`. */
export async function partnerWithCompany(
  api: Got,
  name: string,
  callbackUrl: string,
  signatureScheme?: string,
): Promise<{ partnerId: string; companyId: string }> {
  const json = signatureScheme ? { name, signatureScheme } : { name };
  const partner = await api
    .post('admin/v1/partners', { headers: adminHeaders, json })
    .json<{ id: string; apiKey: string }>();
  const company = await api
    .post('v1/companies', {
      headers: { authorization: `Bearer ${partner.apiKey}` },
      json: { name, status_callback: callbackUrl },
    })
    .json<{ id: string }>();
  return { partnerId: partner.id, companyId: company.id };
}

export const delivered = async (pg: Client) =>
  Number((await pg.query<{ n: string }>(`SELECT count(*) AS n FROM callbacks WHERE status = 'delivered'`)).rows[0].n);

/**
 * A healthy partner's load: `rate` credit changes a second for `seconds` (one company per change,
 * one callback each, to the shared receiver under /label/), or until `stop()` says so. Returns
 * once every request has been answered; `arrivals()` then says which callbacks arrived so far and
 * how late.
 */
export async function healthySend(
  ctx: Ctx,
  label: string,
  rate: number,
  seconds: number,
  stop: () => boolean = () => false,
) {
  const m = rate * seconds;
  const rows = (
    await ctx.pg.query<{ id: string; name: string }>(
      `INSERT INTO companies (partner_id, name, currency, callback_url, credit_status)
       SELECT $1, $2 || g, 'EUR', $3 || g, 'active' FROM generate_series(0, ${m - 1}) g RETURNING id, name`,
      [ctx.partnerId, label, ctx.target(`/${label}/`)],
    )
  ).rows.sort((a, b) => Number(a.name.slice(label.length)) - Number(b.name.slice(label.length)));
  const sent = new Array<number>(m);
  const failed: string[] = [];
  const begin = performance.now();
  const calls: Promise<unknown>[] = [];
  let requested = 0;
  for (let i = 0; i < m && !stop(); i++, requested++) {
    const wait = begin + (i * 1000) / rate - performance.now();
    if (wait > 0) await sleep(wait);
    calls.push(
      ctx.api
        .patch(`admin/v1/companies/${rows[i].id}/credit`, {
          headers: adminHeaders,
          json: { creditStatus: 'suspended' },
        })
        .then(
          () => (sent[i] = performance.now()),
          (e: Error) => failed.push(`request ${i}: ${e.message}`),
        ),
    );
  }
  await Promise.all(calls);
  const accepted = rows.map((_, i) => i).filter((i) => sent[i] !== undefined);
  const arrived = (i: number) => ctx.rx.arrivals.has(`/${label}/${i}`);
  return {
    /** Waits until every accepted change's callback arrived, at most `waitMs`. */
    wait: async (waitMs: number) => {
      const deadline = Date.now() + waitMs;
      while (!accepted.every(arrived) && Date.now() < deadline) await sleep(20);
    },
    /** The latencies (API response → arrival) of the callbacks arrived so far, sorted, and what is missing. */
    arrivals: () => {
      const latencies = accepted
        .filter(arrived)
        .map((i) => ctx.rx.arrivals.get(`/${label}/${i}`)! - sent[i])
        .sort((a, b) => a - b);
      return { latencies, requested, accepted: accepted.length, missing: accepted.length - latencies.length, failed };
    },
  };
}
export type HealthyArrivals = ReturnType<Awaited<ReturnType<typeof healthySend>>['arrivals']>;

/** healthySend, then its callbacks, waited for at most `waitMs` after the last response. */
export async function healthyLoad(
  ctx: Ctx,
  label: string,
  rate: number,
  seconds: number,
  waitMs: number,
): Promise<HealthyArrivals> {
  const load = await healthySend(ctx, label, rate, seconds);
  await load.wait(waitMs);
  return load.arrivals();
}

/** How long after a storm's or outage's healthy load its callbacks may take. */
export const HEALTHY_WAIT_MS = 60_000;

/** A healthy load's latencies and arrivals, as a detail line. */
export const healthyLine = (r: HealthyArrivals) =>
  `${pq(r.latencies)}, max ${fmt(r.latencies[r.latencies.length - 1])} ms; ${r.latencies.length} of ${r.requested} arrived${r.failed.length ? `, ${r.failed.length} API requests failed (${r.failed[0]})` : ''}`;

/** The goal that no healthy callback is missing HEALTHY_WAIT_MS after the load (`of`: which one), as a result row. */
export const healthyMissingRow = (r: HealthyArrivals, of = 'the load') => ({
  measure: `healthy callbacks missing ${HEALTHY_WAIT_MS / 1000} s after ${of}`,
  result: `${r.missing} of ${r.accepted}${r.failed.length ? ` (and ${r.failed.length} API requests failed)` : ''}`,
  goal: 'none',
  met: r.missing === 0 && r.failed.length === 0,
});

export const pq = (l: number[]) => `p50 ${fmt(quantile(l, 0.5))} ms, p99 ${fmt(quantile(l, 0.99))} ms`;

/**
 * Where a healthy load's time went, from the rows: its change's commit (the callback's
 * created_at: the transaction's start) → its first attempt's start (admission, the job, a worker
 * slot), and that start → arrival at the receiver (the request). Percentiles of each, as a detail.
 */
export async function healthyStages(ctx: Ctx, label: string): Promise<string> {
  const { rows } = await ctx.pg.query<{ url: string; created: number; started: number }>(
    `SELECT c.url, extract(epoch FROM c.created_at) * 1000 AS created, extract(epoch FROM min(a.started_at)) * 1000 AS started
       FROM callbacks c JOIN callback_attempts a ON a.callback_id = c.id
      WHERE c.partner_id = $1 AND c.url LIKE $2 GROUP BY c.id`,
    [ctx.partnerId, `%/${label}/%`],
  );
  const toAdmitted: number[] = [];
  const toArrival: number[] = [];
  for (const r of rows) {
    const arrived = ctx.rx.arrivals.get(r.url.slice(r.url.indexOf(`/${label}/`)));
    toAdmitted.push(Number(r.started) - Number(r.created));
    if (arrived !== undefined) toArrival.push(performance.timeOrigin + arrived - Number(r.started));
  }
  const sorted = (l: number[]) => l.sort((a, b) => a - b);
  return `commit → attempt start ${pq(sorted(toAdmitted))}; attempt start → arrival ${pq(sorted(toArrival))}`;
}
