// drain: 20,000 pending callbacks (BENCH_DRAIN_CALLBACKS) committed at once, to one destination or
// spread over BENCH_ORIGINS, drained by the running service: once for an hmac-sha256 partner and
// once for an ed25519 one (BENCH_DRAIN_SCHEMES), side by side in the same run, each with its CPU
// per callback (Ed25519 signs far slower than HMAC).
import { ArrivalReceiver, arrivalReceiver } from '../receivers.js';
import { envInt, figure, fmt, sleep, until } from '../support/common.js';
import { ScenarioResult } from '../support/results.js';
import { costReport, processMemory, withDescendants } from '../support/cost.js';
import { cpuUsed, roundTrips } from '../support/system.js';
import { BODY, Ctx, delivered, partnerWithCompany } from './context.js';

const PAIRED_WINDOW_MS = 10_000; // see BENCH_START_AT
/** The drain's rate goal, as a share of the baseline's (issue 60). */
const DRAIN_GOAL = 0.65;
const SCHEMES = ['hmac-sha256', 'ed25519'] as const;
type Scheme = (typeof SCHEMES)[number];

/** The schemes BENCH_DRAIN_SCHEMES names (default both, in this order), checked before anything runs. */
export function drainSchemes(): Scheme[] {
  const named = (process.env.BENCH_DRAIN_SCHEMES ?? SCHEMES.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = named.filter((s) => !(SCHEMES as readonly string[]).includes(s));
  if (unknown.length || named.length === 0)
    throw new Error(
      `bench: BENCH_DRAIN_SCHEMES names ${unknown.join(', ') || 'nothing'}; the schemes are ${SCHEMES.join(', ')}`,
    );
  return named as Scheme[];
}

export async function drainScenario(ctx: Ctx): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (const scheme of drainSchemes()) {
    // The shared partner signs with hmac-sha256; an ed25519 one of its own, with a company.
    const owner =
      scheme === 'hmac-sha256'
        ? ctx
        : await partnerWithCompany(ctx.api, 'Bench Ed25519', ctx.target('/company'), scheme);
    // Each drain after the first to a receiver of its own: a destination as new as the first's
    // (its window starts small), though the process runs warm by then (docs/benchmarks.md).
    const own = results.length === 0 ? null : await arrivalReceiver();
    try {
      results.push(await drainOnce(ctx, owner, scheme, own ?? ctx.rx));
    } finally {
      await own?.close();
    }
  }
  const [hmac, ed25519] = SCHEMES.map((s) => results.find((r) => r.variant === s));
  if (hmac && ed25519) {
    const [a, b] = [hmac.figures.serviceCpuUs, ed25519.figures.serviceCpuUs];
    const extra = a !== null && b !== null ? b - a : NaN;
    ed25519.rows.push({
      measure: 'service CPU per callback against hmac-sha256 in this run',
      result: `${extra >= 0 ? '+' : ''}${fmt(extra)} µs`,
    });
    ed25519.figures.serviceCpuUsOverHmac = figure(extra);
  }
  return results;
}

async function drainOnce(
  ctx: Ctx,
  owner: { partnerId: string; companyId: string },
  scheme: Scheme,
  rx: ArrivalReceiver,
): Promise<ScenarioResult> {
  const { pg } = ctx;
  const backlog = envInt('BENCH_DRAIN_CALLBACKS', 20_000);
  // BENCH_START_AT=<epoch ms>: the drain starts then, so two builds' drains run at the same
  // moment on one machine. Each sees the same machine (its speed here swings by a third between
  // runs), so the ratio of their rates is steadier than either rate; Redis's and PostgreSQL's CPU
  // is then shared by both and not attributed. It times the first scheme's drain: pair one scheme.
  const startAt = Number(process.env.BENCH_START_AT ?? NaN);
  if (Number.isFinite(startAt)) await sleep(Math.max(0, startAt - Date.now()));
  const origins = envInt('BENCH_ORIGINS', 1);
  const extra = await Promise.all(Array.from({ length: Math.max(0, origins - 1) }, () => arrivalReceiver()));
  try {
    const receivers = [rx, ...extra];
    const ports = receivers.map((r) => r.port);
    // Each drain's paths of its own (a receiver keeps every path it was sent).
    const path = `/drain-${scheme}-${Date.now()}/`;
    // The paths are new to the receivers: their count grows by one at each callback's first arrival.
    const known = receivers.map((r) => r.arrivals.size);
    const before = await delivered(pg);
    await pg.query(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
       SELECT $1, $2, 0, 'http://127.0.0.1:' || ($3::int[])[1 + g % array_length($3::int[], 1)] || $5 || g, $4, 'pending', now()
         FROM generate_series(1, ${backlog}) g`,
      [owner.partnerId, owner.companyId, ports, BODY, path],
    );
    // The service's processes and those they started, at each end (one started meanwhile counts whole).
    const cpuBefore = cpuUsed(withDescendants(ctx.run.pids()));
    const tripsBefore = await roundTrips(pg);
    const t0 = performance.now();
    await pg.query(`SELECT pg_notify('funding_callbacks', '')`);
    // Paired, the rate over the first PAIRED_WINDOW_MS is the one to compare: both runs are
    // draining then (the slower one's end, run alone, would flatter it).
    const windowCount = Number.isFinite(startAt)
      ? new Promise<number>((r) =>
          setTimeout(
            () =>
              r(
                delivered(pg).then(
                  (n) => n - before,
                  () => NaN,
                ),
              ),
            PAIRED_WINDOW_MS,
          ),
        )
      : Promise.resolve(NaN);
    // Waits on the receivers, then on PostgreSQL for the last settlements: a count of the callbacks
    // polled all along would run on PostgreSQL beside the service and be measured as its cost.
    const arrived = () => receivers.reduce((n, r, i) => n + r.arrivals.size - known[i], 0);
    await until(() => arrived() >= backlog, 'backlog arrived');
    await until(async () => (await delivered(pg)) - before >= backlog, 'backlog drained');
    const drain = backlog / ((performance.now() - t0) / 1000);
    const cpuAfter = cpuUsed(withDescendants(ctx.run.pids()));
    const tripsAfter = await roundTrips(pg);
    const per = (k: keyof typeof cpuAfter) => (cpuAfter[k] - cpuBefore[k]) / backlog;
    const trips = (k: keyof typeof tripsAfter) => (tripsAfter[k] - tripsBefore[k]) / backlog;
    const early = (await windowCount) / (PAIRED_WINDOW_MS / 1000);
    const r = drain / ctx.baseline;
    const cost = costReport(
      'callback',
      cpuAfter.service - cpuBefore.service,
      backlog,
      ctx.baselineClientCpuUs ?? NaN,
      await processMemory(ctx.run),
    );
    const cpu = Number.isFinite(startAt)
      ? `service ${fmt(per('service'))} µs (Redis and PostgreSQL shared with the paired run)`
      : `${fmt(per('service'))} (${fmt(per('serviceSystem'))}) / ${fmt(per('redis'))} / ${fmt(per('postgres'))} / ${fmt(per('bench'))} µs`;
    return {
      scenario: 'drain',
      variant: scheme,
      title: `${fmt(backlog)} pending callbacks of an ${scheme} partner committed at once, to ${origins === 1 ? 'one destination' : `${origins} destinations`}`,
      details: Number.isFinite(early)
        ? [`paired (BENCH_START_AT): ${fmt(early)} callbacks/s over the first ${PAIRED_WINDOW_MS / 1000} s`]
        : [],
      rows: [
        {
          measure: 'drain rate',
          result: `${fmt(drain)} callbacks/s = ${fmt(r, 2)}× baseline`,
          goal: `≥ ${DRAIN_GOAL}×`,
          met: r >= DRAIN_GOAL,
        },
        ...cost.rows,
        { measure: 'CPU per callback: service (of it kernel) / Redis / PostgreSQL / driver and receiver', result: cpu },
        {
          measure: 'round trips per callback: PostgreSQL transactions / Redis commands',
          result: `${fmt(trips('postgres'), 2)} / ${fmt(trips('redis'), 2)}`,
        },
      ],
      figures: {
        callbacks: backlog,
        destinations: origins,
        callbacksPerSecond: figure(drain),
        ratio: figure(r),
        pairedWindowPerSecond: figure(early),
        serviceCpuUs: figure(per('service')),
        serviceKernelCpuUs: figure(per('serviceSystem')),
        redisCpuUs: figure(per('redis')),
        postgresCpuUs: figure(per('postgres')),
        benchCpuUs: figure(per('bench')),
        postgresTransactions: figure(trips('postgres')),
        redisCommands: figure(trips('redis')),
        ...cost.figures,
      },
    };
  } finally {
    await Promise.all(extra.map((x) => x.close()));
  }
}
