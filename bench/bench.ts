// npm run bench: the service (ROLE=all, compiled; BENCH_SPLIT=1: ROLE=api + ROLE=worker) in child processes against the local
// PostgreSQL and Redis, receivers on 127.0.0.1, and this process driving load. Loopback only;
// every loop is bounded in count and time.
//
// Scenarios, in this order; BENCH_ONLY=<name>[,<name>…] runs only those (the baseline always runs):
//   drain      20,000 pending callbacks committed at once, drained (BENCH_ORIGINS destinations)
//   api        10,000 credit-limit changes through the API, 64 in flight
//   latency    API response → arrival at 0.25 × the baseline's rate (BENCH_RATE sets it)
//   isolation  a healthy destination at 10 changes/s, alone and beside a dead one with 2,000 pending
//   storm      50 dead and 3 slow origins with 40 pending each beside a healthy partner at 10/s
//   backlog    1,000,000 pending callbacks (BENCH_BACKLOG_ROWS) inserted before the service starts
// The first five share one service and database; backlog has its own.
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import path from 'node:path';
import got, { Got, RequestError } from 'got';
import { Client } from 'pg';
import { createRedis, deletePrefixKeys, isCluster, RedisConnection, withRedisOnce } from '../src/database/redis.js';
import { loopbackReceivers } from './receivers.js';

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1) throw new Error(`bench: ${name} must be a positive integer, got "${raw}"`);
  return Number(raw);
}

const BASE_DB = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const ADMIN = 'bench-admin-token-0123456789';
const SPLIT = process.env.BENCH_SPLIT === '1';
const BASELINE_REQUESTS = 20_000;
const BACKLOG = 20_000; // the drain's pending callbacks
const API_CHANGES = 10_000; // each raises the limit: callbacks 0 and 2
const RATE_SECONDS = 10;
const LATENCY_SHARE = 0.25; // the latency run's offered rate, as a share of the baseline's
const DEADLINE_MS = 180_000;
const DEAD_BACKLOG = 2_000; // pending callbacks to the dead destination in the isolation run
const HEALTHY_RATE = 10; // changes per second to the healthy destination (isolation, storm)
const HEALTHY_SECONDS = 20;
const PAIRED_WINDOW_MS = 10_000; // see BENCH_START_AT
// Storm: dead origins (accept, never answer), slow ones (200 after STORM_SLOW_MS), each with a backlog.
const STORM_DEAD = 50;
const STORM_SLOW = 3;
const STORM_PER_ORIGIN = 40;
const STORM_SLOW_MS = 8_000;
const STORM_SECONDS = envInt('BENCH_STORM_SECONDS', 70); // the healthy load's length, alone and in the storm
const HEALTHY_WAIT_MS = 60_000; // how long after the storm's healthy load its callbacks may take
const STORM_RECOVERY_MS = envInt('BENCH_STORM_RECOVERY_S', 300) * 1000; // how long to wait for the dead ones' callbacks
// Backlog: rows inserted before the service starts, spread over BACKLOG_ORIGINS receivers.
const BACKLOG_ROWS = envInt('BENCH_BACKLOG_ROWS', 1_000_000);
const BACKLOG_ORIGINS = envInt('BENCH_BACKLOG_ORIGINS', 10);
const BACKLOG_INSERT_CHUNK = 250_000;
const BACKLOG_STALL_MS = 120_000; // no new callback for this long ends the wait
const BACKLOG_DEADLINE_MS = Math.max(600_000, BACKLOG_ROWS * 5); // 5 ms a callback: 1M → 83 min at most
const SERVICE_START_MS = 120_000;

const SCENARIOS = ['drain', 'api', 'latency', 'isolation', 'storm', 'backlog'] as const;
type Scenario = (typeof SCENARIOS)[number];
const ONLY = (process.env.BENCH_ONLY ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const selected = (s: Scenario) => ONLY.length === 0 || ONLY.includes(s);

const quantile = (sorted: number[], q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : NaN);
const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: digits }) : 'n/a');
const mb = (bytes: number) => `${fmt(bytes / 1024 / 1024)} MB`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A goal's verdict; a figure that was not measured meets nothing. */
const verdict = (ok: boolean | null) => (ok === null ? 'not measured' : ok ? 'met' : 'NOT MET');
/** The goal lines of every scenario, printed again together at the end of a run of several. */
const goals: string[] = [];
function block(title: string, lines: string[], goalLines: string[] = []): void {
  console.log(`\n${title}`);
  for (const l of [...lines, ...goalLines]) console.log(`  ${l}`);
  goals.push(...goalLines);
}

/** A partner endpoint that answers 204 and notes when each path arrived. */
async function receiver() {
  const arrivals = new Map<string, number>();
  let count = 0;
  const agentServer = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count++;
      arrivals.set(req.url ?? '', performance.now());
      res.writeHead(204).end();
    });
  });
  agentServer.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => agentServer.listen(0, '127.0.0.1', r));
  const port = (agentServer.address() as AddressInfo).port;
  return { arrivals, port, count: () => count, close: () => new Promise((r) => (agentServer.closeAllConnections(), agentServer.close(r))) };
}
type Receiver = Awaited<ReturnType<typeof receiver>>;

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
    close: () => new Promise((r) => (hanging.forEach((h) => h.destroy()), server.closeAllConnections(), server.close(r))),
  };
}

/**
 * A storm origin: `dead` accepts connections and never answers, `slow` answers 200 after
 * STORM_SLOW_MS. `recover()` makes either answer 204 at once, including the requests a dead one
 * holds whose connection is still open (the partner's process wakes up). Notes the connections
 * offered and, per webhook-id, when it was first answered with a 2xx on a live connection.
 */
async function stormOrigin(kind: 'dead' | 'slow') {
  let connections = 0;
  let requests = 0;
  let answering = false;
  let held = 0; // requests still open when it recovered, answered then
  let firstNew = NaN; // the first request made after it recovered
  const hanging = new Map<http.ServerResponse, () => void>();
  const timers = new Set<NodeJS.Timeout>();
  const answered = new Map<string, number>();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests++;
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
    kind,
    url: `http://127.0.0.1:${port}`,
    answered,
    connections: () => connections,
    requests: () => requests,
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

async function until(fn: () => boolean | Promise<boolean>, what: string, timeoutMs = DEADLINE_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** Runs `total` tasks with at most `width` in flight. */
async function pool(total: number, width: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < total) await task(next++);
    }),
  );
}

async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/** Peak resident set (VmHWM) of a process over its life, MB. */
function peakRssMb(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN; // ended
  }
}

/** Resident set (VmRSS) of a process now, MB. */
function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Redis INFO memory used_memory, bytes (the sum over a cluster's masters). */
async function usedMemory(redis: RedisConnection): Promise<number> {
  let total = 0;
  for (const node of isCluster(redis) ? redis.nodes('master') : [redis]) {
    total += Number(/^used_memory:(\d+)/m.exec(await node.info('memory'))?.[1] ?? NaN);
  }
  return total;
}

/**
 * CPU time (µs, user + system) used so far by the service processes, Redis, PostgreSQL and this
 * process (the driver and the receivers), read from /proc (Linux; USER_HZ is 100 there). The
 * drain's figure per callback is the cost that decides throughput on a machine whose cores are
 * all busy, and varies far less from run to run than the rate itself.
 */
function cpuUsed(servicePids: number[]): { service: number; serviceSystem: number; redis: number; postgres: number; bench: number } {
  const used = { service: 0, serviceSystem: 0, redis: 0, postgres: 0, bench: 0 };
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const us = (Number(fields[11]) + Number(fields[12])) * 10_000; // utime + stime, in 1/100 s
    if (servicePids.includes(Number(pid))) {
      used.service += us;
      used.serviceSystem += Number(fields[12]) * 10_000;
    }
    else if (Number(pid) === process.pid) used.bench += us;
    else if (comm === 'redis-server') used.redis += us;
    else if (comm === 'postgres') used.postgres += us;
  }
  return used;
}

/**
 * Statements run in the run's database (every statement outside a transaction is one) and
 * commands Redis processed (all of its clients: the drain is all that runs), so far.
 */
async function roundTrips(pg: Client): Promise<{ postgres: number; redis: number }> {
  const { rows } = await pg.query(`SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()`);
  const commands = await withRedisOnce(REDIS_URL, async (redis) => {
    let n = 0;
    for (const node of isCluster(redis) ? redis.nodes('master') : [redis]) n += Number(/^total_commands_processed:(\d+)/m.exec(await node.info('stats'))?.[1] ?? NaN);
    return n;
  });
  return { postgres: Number(rows[0].n), redis: commands };
}

/** Delivery and dashboard settings given to the bench go to the service (to compare them). */
const FORWARDED = Object.fromEntries(Object.entries(process.env).filter(([k]) => /^(CALLBACK|DASHBOARD)_/.test(k))) as Record<string, string>;
const SETTINGS = Object.keys(FORWARDED).length ? Object.entries(FORWARDED).map(([k, v]) => `${k}=${v}`).join(' ') : 'none';
// The flags `npm start` runs the service with; BENCH_NODE_ARGS adds more, e.g.
// "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the service processes.
const NODE_ARGS = ['--max-old-space-size=128', '--max-semi-space-size=16', ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)];

/**
 * PostgreSQL runs autovacuum by default; a machine may turn it off (CI's does). Its figures would
 * then be those of a misconfigured server: `callbacks` is a queue, and without VACUUM and ANALYZE
 * dead entries pile up at the head of admission's indexes and its plans go stale (a 1,000,000
 * backlog drained at half its rate until one ANALYZE). So the bench stands in for autovacuum on
 * its own databases, by autovacuum's rules: every `autovacuum_naptime`, VACUUM each table whose
 * dead rows (or rows inserted since its last vacuum) passed autovacuum's threshold + scale factor
 * × its rows, and ANALYZE each whose changes since its last analyze passed that threshold.
 */
class AutovacuumStandIn {
  readonly done = { vacuum: 0, analyze: 0 };
  private timer: NodeJS.Timeout | null = null;
  private working: Promise<void> = Promise.resolve();

  private constructor(private readonly pg: Client) {}

  /** On its own connection to the database (a VACUUM under way holds up nothing else); null when the server runs autovacuum itself. */
  static async start(dbUrl: string): Promise<AutovacuumStandIn | null> {
    const pg = new Client({ connectionString: dbUrl });
    pg.on('error', () => undefined); // the run's database dropped at cleanup: its stop() ends it anyway
    await pg.connect();
    const { rows } = await pg
      .query(`SELECT current_setting('autovacuum') AS on, (SELECT setting::int FROM pg_settings WHERE name = 'autovacuum_naptime') AS naptime`)
      .catch(async (e: Error) => {
        await pg.end();
        throw e;
      });
    if (rows[0].on === 'on') {
      await pg.end();
      return null;
    }
    const standIn = new AutovacuumStandIn(pg);
    standIn.timer = setInterval(() => (standIn.working = standIn.working.then(() => standIn.pass()).catch(() => undefined)), rows[0].naptime * 1000);
    return standIn;
  }

  private async pass(): Promise<void> {
    const limit = (kind: string) =>
      `current_setting('autovacuum_${kind}_threshold')::float8 + current_setting('autovacuum_${kind}_scale_factor')::float8 * greatest(c.reltuples, 0)`;
    const { rows } = await this.pg.query<{ name: string; vacuum: boolean; analyze: boolean }>(
      `SELECT quote_ident(s.relname) AS name,
              s.n_dead_tup > ${limit('vacuum')} OR s.n_ins_since_vacuum > ${limit('vacuum_insert')} AS vacuum,
              s.n_mod_since_analyze > ${limit('analyze')} AS analyze
         FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid`,
    );
    for (const r of rows) {
      if (r.vacuum) await this.pg.query(`VACUUM ${r.name}`).then(() => this.done.vacuum++);
      if (r.analyze) await this.pg.query(`ANALYZE ${r.name}`).then(() => this.done.analyze++);
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.working;
    await this.pg.end().catch(() => undefined);
  }
}

/** Service runs not yet cleaned up: an interrupted bench removes them too. */
const active = new Set<ServiceRun>();

/**
 * One database (funding_bench_*), queue prefix and the service processes on it: one ROLE=all,
 * or with BENCH_SPLIT=1 a ROLE=api and a ROLE=worker. `cleanup()` stops them and removes the
 * database and the prefix's Redis keys.
 */
class ServiceRun {
  readonly suffix = randomBytes(4).toString('hex');
  readonly dbName = `funding_bench_${this.suffix}`;
  readonly dbUrl = BASE_DB.replace(/\/[^/]*$/, `/${this.dbName}`);
  readonly prefix = `bench-${this.suffix}`;
  children: ChildProcess[] = [];
  port = 0;
  pg: Client | null = null;
  autovacuum: AutovacuumStandIn | null = null;

  constructor() {
    active.add(this);
  }

  /** Starts the service (it creates and migrates the database on its first start) and connects. */
  async start(): Promise<void> {
    if (!this.pg) console.log(`  (service run: database ${this.dbName}, queue prefix ${this.prefix})`);
    this.port = await freePort();
    const roles: [string, number][] = SPLIT ? [['api', this.port], ['worker', await freePort()]] : [['all', this.port]];
    for (const [role, port] of roles) await this.spawnRole(role, port);
    if (!this.pg) {
      this.pg = new Client({ connectionString: this.dbUrl });
      await this.pg.connect();
      this.autovacuum = await AutovacuumStandIn.start(this.dbUrl);
      if (this.autovacuum) console.log(`  (PostgreSQL runs with autovacuum off: the bench stands in for it on ${this.dbName}, by its thresholds, every autovacuum_naptime)`);
    }
  }

  /** Starts one process and waits for its ready line; it is in `children` from the start (a failed start is cleaned up too). */
  private async spawnRole(role: string, port: number): Promise<void> {
    const child = spawn(process.execPath, [...NODE_ARGS, path.resolve(__dirname, '../src/main.js')], {
      env: {
        PATH: process.env.PATH ?? '',
        ROLE: role,
        PORT: String(port),
        DATABASE_URL: this.dbUrl,
        REDIS_URL,
        QUEUE_PREFIX: this.prefix,
        ADMIN_TOKEN: ADMIN,
        CALLBACK_ALLOW_HTTP: 'true',
        CALLBACK_ALLOW_PRIVATE_TARGETS: 'true',
        ...FORWARDED,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    this.children.push(child);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`service (ROLE=${role}) not ready within ${SERVICE_START_MS / 1000} s`)), SERVICE_START_MS);
      child.stdout!.on('data', (d: Buffer) => {
        // The service's own log lines (a circuit opening or closing, warnings) go through.
        for (const line of d.toString().split('\n')) if (line.trim() && !line.includes('ready:')) console.log(`  [${role}] ${line.trim()}`);
        if (d.toString().includes('ready:')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`service (ROLE=${role}) exited with ${code ?? signal}`));
      });
    });
  }

  pids(): number[] {
    return this.children.map((c) => c.pid!);
  }

  /** SIGTERM (in-flight deliveries finish), SIGKILL after 60 s. */
  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(async (c) => {
        if (c.exitCode !== null || c.signalCode !== null) return;
        const exited = new Promise((r) => c.once('exit', r));
        c.kill('SIGTERM');
        const kill = setTimeout(() => c.kill('SIGKILL'), 60_000);
        await exited;
        clearTimeout(kill);
      }),
    );
    this.children = [];
  }

  killNow(): void {
    for (const c of this.children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  }

  async cleanup(): Promise<void> {
    try {
      await this.stop();
      await this.autovacuum?.stop();
      if (this.autovacuum) console.log(`  (autovacuum stand-in on ${this.dbName}: ${this.autovacuum.done.vacuum} VACUUM, ${this.autovacuum.done.analyze} ANALYZE)`);
      this.autovacuum = null;
      await this.pg?.end().catch(() => undefined);
      this.pg = null;
      const admin = new Client({ connectionString: BASE_DB });
      await admin.connect();
      try {
        await admin.query(`DROP DATABASE IF EXISTS ${this.dbName} WITH (FORCE)`);
      } finally {
        await admin.end();
      }
      // The run's BullMQ keys go too (retries still delayed, the queue's meta and events).
      await withRedisOnce(REDIS_URL, (redis) => deletePrefixKeys(redis, this.prefix));
    } finally {
      active.delete(this);
    }
  }
}

function apiClient(port: number): Got {
  return got.extend({
    prefixUrl: `http://127.0.0.1:${port}`,
    agent: { http: new http.Agent({ keepAlive: true, maxSockets: 128 }) },
    retry: { limit: 0 },
  });
}

const admin = { authorization: `Bearer ${ADMIN}` };
const BODY = JSON.stringify({ message: 0, withdrawalId: null, companyId: 'x', limitRequestId: null, loanId: null });

/** A partner, and a company of it whose own callbacks go to `callbackUrl`. */
async function partnerWithCompany(api: Got, name: string, callbackUrl: string): Promise<{ partnerId: string; companyId: string }> {
  const partner = await api.post('admin/v1/partners', { headers: admin, json: { name } }).json<{ id: string; apiKey: string }>();
  const company = await api
    .post('v1/companies', { headers: { authorization: `Bearer ${partner.apiKey}` }, json: { name, status_callback: callbackUrl } })
    .json<{ id: string }>();
  return { partnerId: partner.id, companyId: company.id };
}

/** What the scenarios on the shared service use. */
interface Ctx {
  run: ServiceRun;
  pg: Client;
  api: Got;
  rx: Receiver;
  target: (p: string) => string;
  partnerId: string;
  companyId: string;
  baseline: number;
}

const delivered = async (pg: Client) => Number((await pg.query(`SELECT count(*) AS n FROM callbacks WHERE status = 'delivered'`)).rows[0].n);

/**
 * The drain: BACKLOG pending records committed at once, to one destination, or spread over
 * BENCH_ORIGINS receivers (destinations) of their own.
 */
async function drainScenario(ctx: Ctx): Promise<void> {
  const { pg, rx } = ctx;
  // BENCH_START_AT=<epoch ms>: the drain starts then, so two builds' drains run at the same
  // moment on one machine. Each sees the same machine (its speed here swings by a third between
  // runs), so the ratio of their rates is steadier than either rate; Redis's and PostgreSQL's CPU
  // is then shared by both and not attributed.
  const startAt = Number(process.env.BENCH_START_AT ?? NaN);
  if (Number.isFinite(startAt)) await sleep(Math.max(0, startAt - Date.now()));
  const origins = envInt('BENCH_ORIGINS', 1);
  const extra = await Promise.all(Array.from({ length: Math.max(0, origins - 1) }, () => receiver()));
  try {
    const ports = [rx.port, ...extra.map((r) => r.port)];
    const before = await delivered(pg);
    await pg.query(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
       SELECT $1, $2, 0, 'http://127.0.0.1:' || ($3::int[])[1 + g % array_length($3::int[], 1)] || '/backlog/' || g, $4, 'pending', now()
         FROM generate_series(1, ${BACKLOG}) g`,
      [ctx.partnerId, ctx.companyId, ports, BODY],
    );
    const servicePids = ctx.run.pids();
    const cpuBefore = cpuUsed(servicePids);
    const tripsBefore = await roundTrips(pg);
    const t0 = performance.now();
    await pg.query(`SELECT pg_notify('funding_callbacks', '')`);
    // Paired, the rate over the first PAIRED_WINDOW_MS is the one to compare: both runs are
    // draining then (the slower one's end, run alone, would flatter it).
    const windowCount = Number.isFinite(startAt)
      ? new Promise<number>((r) => setTimeout(() => r(delivered(pg).then((n) => n - before, () => NaN)), PAIRED_WINDOW_MS))
      : Promise.resolve(NaN);
    await until(async () => (await delivered(pg)) - before >= BACKLOG, 'backlog drained');
    const drain = BACKLOG / ((performance.now() - t0) / 1000);
    const cpuAfter = cpuUsed(servicePids);
    const tripsAfter = await roundTrips(pg);
    const perCallback = (k: keyof typeof cpuAfter) => (cpuAfter[k] - cpuBefore[k]) / BACKLOG;
    const trips = (k: keyof typeof tripsAfter) => fmt((tripsAfter[k] - tripsBefore[k]) / BACKLOG, 2);
    const cpu = Number.isFinite(startAt)
      ? `service ${fmt(perCallback('service'))} µs (Redis and PostgreSQL shared with the paired run)`
      : `service ${fmt(perCallback('service'))} (of it in the kernel ${fmt(perCallback('serviceSystem'))}), Redis ${fmt(perCallback('redis'))}, PostgreSQL ${fmt(perCallback('postgres'))}, receiver and driver ${fmt(perCallback('bench'))} µs`;
    const early = await windowCount;
    const r = drain / ctx.baseline;
    block(
      `drain: ${fmt(BACKLOG)} pending callbacks committed at once, to ${origins === 1 ? 'one destination' : `${origins} destinations`}`,
      [
        `CPU per callback drained: ${cpu}`,
        `round trips per callback drained: PostgreSQL ${trips('postgres')} transactions, Redis ${trips('redis')} commands`,
        ...(Number.isFinite(early) ? [`paired: ${fmt(early / (PAIRED_WINDOW_MS / 1000))} callbacks/s over the first ${PAIRED_WINDOW_MS / 1000} s`] : []),
      ],
      [`drain of ${fmt(BACKLOG)}: ${fmt(drain)} callbacks/s = ${fmt(r, 2)}× baseline   goal ≥ 0.6× (aim 0.9×): ${verdict(r >= 0.6)}${r >= 0.9 ? ', aim reached' : ''}`],
    );
  } finally {
    await Promise.all(extra.map((x) => x.close()));
  }
}

/**
 * Through the API: concurrent credit-limit changes over 64 companies (changes of one company
 * serialise on its row lock, as they must), each committing callbacks 0 and 2.
 */
async function apiScenario(ctx: Ctx): Promise<void> {
  const { pg, api, rx } = ctx;
  const spread = (
    await pg.query(
      `INSERT INTO companies (partner_id, name, currency, callback_url, credit_status)
       SELECT $1, 'T' || g, 'EUR', $2, 'active' FROM generate_series(1, 64) g RETURNING id`,
      [ctx.partnerId, ctx.target('/company')],
    )
  ).rows.map((r) => r.id as string);
  const before = rx.count();
  const servicePids = ctx.run.pids();
  const cpuBefore = cpuUsed(servicePids);
  const tripsBefore = await roundTrips(pg);
  const t0 = performance.now();
  await pool(API_CHANGES, 64, async (i) => {
    await api.patch(`admin/v1/companies/${spread[i % 64]}/credit`, { headers: admin, json: { creditLimit: String(1000 + i) } });
  });
  const apiDone = performance.now();
  await until(() => rx.count() >= before + 2 * API_CHANGES, 'API-driven callbacks');
  const rate = (2 * API_CHANGES) / ((performance.now() - t0) / 1000);
  const [cpuAfter, tripsAfter] = [cpuUsed(servicePids), await roundTrips(pg)];
  const changes = API_CHANGES / ((apiDone - t0) / 1000);
  const r = rate / ctx.baseline;
  const perChange = (n: number) => fmt(n / API_CHANGES);
  block(
    `API-driven: ${fmt(API_CHANGES)} credit-limit changes over 64 companies, 64 in flight (callbacks 0 and 2 each)`,
    [
      `API changes accepted: ${fmt(changes)}/s`,
      `CPU per change and its two callbacks: service ${perChange(cpuAfter.service - cpuBefore.service)}, Redis ${perChange(cpuAfter.redis - cpuBefore.redis)}, ` +
        `PostgreSQL ${perChange(cpuAfter.postgres - cpuBefore.postgres)} µs; round trips: PostgreSQL ${fmt((tripsAfter.postgres - tripsBefore.postgres) / API_CHANGES, 2)} transactions, ` +
        `Redis ${fmt((tripsAfter.redis - tripsBefore.redis) / API_CHANGES, 2)} commands`,
    ],
    [`through the API: ${fmt(rate)} callbacks/s delivered end to end = ${fmt(r, 2)}× baseline   goal ≥ 0.3× (aim 0.5×): ${verdict(r >= 0.3)}${r >= 0.5 ? ', aim reached' : ''}`],
  );
}

/**
 * Latency at a fixed offered load, 0.25 × the baseline's rate unless BENCH_RATE says: one company
 * per request, so each callback is matched to the API response that caused it.
 */
async function latencyScenario(ctx: Ctx): Promise<void> {
  const { pg, api, rx } = ctx;
  const rate = process.env.BENCH_RATE ? envInt('BENCH_RATE', 1) : Math.max(1, Math.round(LATENCY_SHARE * ctx.baseline));
  const n = rate * RATE_SECONDS;
  const ids = (
    await pg.query(
      `INSERT INTO companies (partner_id, name, currency, callback_url, credit_status)
       SELECT $1, 'L' || g, 'EUR', $2 || g, 'active' FROM generate_series(0, ${n - 1}) g RETURNING id, name`,
      [ctx.partnerId, ctx.target('/lat/')],
    )
  ).rows.sort((a, b) => Number(a.name.slice(1)) - Number(b.name.slice(1)));
  const responded = new Array<number>(n);
  const start = performance.now();
  const inflight: Promise<void>[] = [];
  const failures: string[] = [];
  for (let i = 0; i < n; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 0) await sleep(wait);
    // Settled at once, not only when the loop ends: a failed request is reported, not an
    // unhandled rejection that would end the bench.
    inflight.push(
      api.patch(`admin/v1/companies/${ids[i].id}/credit`, { headers: admin, json: { creditStatus: 'suspended' } }).then(
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
  if (failures.length > 0) throw new Error(`bench: ${failures.length} of ${n} latency requests failed, e.g. ${failures.slice(0, 3).join('; ')}`);
  await until(() => ids.every((_, i) => rx.arrivals.has(`/lat/${i}`)), 'latency callbacks');
  const latencies = ids.map((_, i) => rx.arrivals.get(`/lat/${i}`)! - responded[i]).sort((a, b) => a - b);
  const completed = n / ((performance.now() - start) / 1000); // requests answered and callbacks arrived, per second of the run
  if (process.env.BENCH_DUMP) {
    // Per latency callback, epoch ms: due, API response, committed row's tx start, attempt
    // started, arrival at the receiver, the settlement's statement start. Finds the stage behind a slow one.
    const epoch = (t: number) => (performance.timeOrigin + t).toFixed(1);
    const stages = new Map(
      (
        await pg.query(
          `SELECT c.url, extract(epoch FROM c.created_at) * 1000 AS created, extract(epoch FROM a.started_at) * 1000 AS started,
                  extract(epoch FROM c.delivered_at) * 1000 AS settled
             FROM callbacks c JOIN callback_attempts a ON a.callback_id = c.id WHERE c.url LIKE '%/lat/%'`,
        )
      ).rows.map((r) => [r.url.slice(r.url.lastIndexOf('/') + 1), r]),
    );
    const lines = ids.map((_, i) => {
      const st = stages.get(String(i));
      return [i, epoch(start + (i * 1000) / rate), epoch(responded[i]), st?.created, st?.started, epoch(rx.arrivals.get(`/lat/${i}`)!), st?.settled].join(' ');
    });
    writeFileSync(process.env.BENCH_DUMP, lines.join('\n') + '\n');
  }
  const p99 = quantile(latencies, 0.99);
  const share = rate / ctx.baseline;
  block(
    `latency: one credit change per company at ${fmt(rate)}/s for ${RATE_SECONDS} s (${fmt(share, 2)}× baseline${process.env.BENCH_RATE ? ', BENCH_RATE' : ''}; all answered and arrived at ${fmt(completed)}/s)`,
    [`API response → arrival: p50 ${fmt(quantile(latencies, 0.5))} ms, p99 ${fmt(p99)} ms, max ${fmt(latencies[latencies.length - 1])} ms`],
    // A lower offered rate (BENCH_RATE) says nothing of the goal's.
    [`latency p99 at ${fmt(share, 2)}× baseline offered: ${fmt(p99)} ms   goal ≤ 60 ms at 0.25×: ${verdict(share >= LATENCY_SHARE * 0.99 ? p99 <= 60 : null)}`],
  );
}

/**
 * A healthy partner's load: `rate` credit changes a second for `seconds` (one company per change,
 * one callback each, to the shared receiver under /label/). Returns once every request has been
 * answered; `arrivals()` then says which callbacks arrived so far and how late.
 */
async function healthySend(ctx: Ctx, label: string, rate: number, seconds: number) {
  const m = rate * seconds;
  const rows = (
    await ctx.pg.query(
      `INSERT INTO companies (partner_id, name, currency, callback_url, credit_status)
       SELECT $1, $2 || g, 'EUR', $3 || g, 'active' FROM generate_series(0, ${m - 1}) g RETURNING id, name`,
      [ctx.partnerId, label, ctx.target(`/${label}/`)],
    )
  ).rows.sort((a, b) => Number(a.name.slice(label.length)) - Number(b.name.slice(label.length)));
  const sent = new Array<number>(m);
  const failed: string[] = [];
  const begin = performance.now();
  const calls: Promise<unknown>[] = [];
  for (let i = 0; i < m; i++) {
    const wait = begin + (i * 1000) / rate - performance.now();
    if (wait > 0) await sleep(wait);
    calls.push(
      ctx.api.patch(`admin/v1/companies/${rows[i].id}/credit`, { headers: admin, json: { creditStatus: 'suspended' } }).then(
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
      const latencies = accepted.filter(arrived).map((i) => ctx.rx.arrivals.get(`/${label}/${i}`)! - sent[i]).sort((a, b) => a - b);
      return { latencies, requested: m, accepted: accepted.length, missing: accepted.length - latencies.length, failed };
    },
  };
}

/** healthySend, then its callbacks, waited for at most `waitMs` after the last response. */
async function healthyLoad(ctx: Ctx, label: string, rate: number, seconds: number, waitMs: number) {
  const load = await healthySend(ctx, label, rate, seconds);
  await load.wait(waitMs);
  return load.arrivals();
}
const pq = (l: number[]) => `p50 ${fmt(quantile(l, 0.5))} ms, p99 ${fmt(quantile(l, 0.99))} ms`;

/**
 * Isolation: a destination that accepts and never answers, with DEAD_BACKLOG pending callbacks,
 * beside a healthy one changed HEALTHY_RATE times a second (one company per change). Healthy
 * latency alone, then with the dead neighbour; the connections the dead one is offered while
 * down; after it answers again, its first and last callback.
 */
async function isolationScenario(ctx: Ctx): Promise<void> {
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
    const recovered = performance.now();
    dead.recover();
    await until(
      async () => Number((await pg.query(`SELECT count(*) AS n FROM callbacks WHERE url LIKE '%/dead/%' AND status = 'delivered'`)).rows[0].n) >= DEAD_BACKLOG,
      'the dead backlog after recovery',
      300_000,
    );
    const firstAfter = Math.min(...dead.arrivals) - recovered;
    const lastAfter = Math.max(...dead.arrivals) - recovered;
    const backlogAfterProbe = Math.max(...dead.arrivals) - Math.min(...dead.arrivals);
    const p99Alone = quantile(alone.latencies, 0.99);
    const p99Beside = quantile(withDead.latencies, 0.99);
    const missing = (r: typeof alone) => (r.missing || r.failed.length ? ` (${r.missing} of ${r.accepted} missing, ${r.failed.length} requests failed)` : '');
    block(`isolation: a healthy destination at ${HEALTHY_RATE}/s for ${HEALTHY_SECONDS} s, alone, then beside a dead one with ${fmt(DEAD_BACKLOG)} pending`, [
      `healthy alone                             ${pq(alone.latencies)}${missing(alone)}`,
      `healthy beside the dead one               ${pq(withDead.latencies)}${missing(withDead)}`,
      `connections offered to the dead one in ${fmt((recovered - outageStart) / 1000)} s down  ${downConnections}`,
      `after it answers again: first callback +${fmt(firstAfter / 1000)} s, last +${fmt(lastAfter / 1000)} s (${fmt(backlogAfterProbe / 1000)} s from the first successful probe to its last callback)`,
    ], [
      `isolation: healthy p99 ${fmt(p99Alone)} ms alone → ${fmt(p99Beside)} ms beside the dead one   goal ≤ alone + 100 ms: ${verdict(Number.isFinite(p99Beside) ? p99Beside <= p99Alone + 100 && withDead.missing === 0 : null)}${withDead.missing ? ` (${withDead.missing} missing)` : ''}`,
    ]);
  } finally {
    await dead.close();
  }
}

/**
 * Storm: STORM_DEAD origins that accept and never answer and STORM_SLOW that answer 200 after
 * STORM_SLOW_MS (each its own server, so its own destination), STORM_PER_ORIGIN pending callbacks
 * each (one storm partner and company, rows inserted with SQL), beside the healthy partner at
 * HEALTHY_RATE changes/s through the API for STORM_SECONDS; that load ran alone first, as long.
 * The dead ones stay down until the healthy load is over, then all answer 204 at once.
 */
async function stormScenario(ctx: Ctx): Promise<void> {
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
    while ((deadArrived() < deadWanted || slowArrived() < STORM_SLOW * STORM_PER_ORIGIN) && performance.now() < deadline) {
      await sleep(100);
      if (performance.now() >= nextReport) {
        console.log(`  storm: +${fmt((performance.now() - recovered) / 1000, 0)} s after recovery: ${fmt(deadArrived())} of ${fmt(deadWanted)} of the dead origins' callbacks and ${slowArrived()} of ${STORM_SLOW * STORM_PER_ORIGIN} of the slow ones' arrived`);
        nextReport += 30_000;
      }
    }
    const beside = await besideDone;
    const besideAtEnd = besideLoad.arrivals();
    const endSeconds = (performance.now() - recovered) / 1000;
    const deadTimes = dead.flatMap((o) => [...o.answered.values()]);
    const first = deadTimes.length ? (Math.min(...deadTimes) - recovered) / 1000 : NaN;
    const last = deadTimes.length ? (Math.max(...deadTimes) - recovered) / 1000 : NaN;
    const allArrived = deadTimes.length === deadWanted;
    const firstNew = (Math.min(...dead.map((o) => o.firstNew()).filter((t) => !Number.isNaN(t))) - recovered) / 1000;
    const slowTimes = slow.flatMap((o) => [...o.answered.values()]);
    const statuses = (
      await pg.query(`SELECT status, count(*)::int AS n FROM callbacks WHERE partner_id = $1 GROUP BY status ORDER BY status`, [storm.partnerId])
    ).rows.map((r) => `${r.status} ${fmt(r.n)}`);

    const p99Alone = quantile(alone.latencies, 0.99);
    const p99Beside = quantile(beside.latencies, 0.99);
    const over = down.filter((c) => c > 10).length;
    const healthyLine = (r: typeof alone) =>
      `${pq(r.latencies)}, max ${fmt(r.latencies[r.latencies.length - 1])} ms; ${r.latencies.length} of ${r.requested} arrived${r.failed.length ? `, ${r.failed.length} API requests failed (${r.failed[0]})` : ''}`;
    block(
      `storm: ${STORM_DEAD} dead origins (accept, never answer) + ${STORM_SLOW} slow (200 after ${STORM_SLOW_MS / 1000} s), ${STORM_PER_ORIGIN} pending callbacks each, beside a healthy partner at ${HEALTHY_RATE} changes/s for ${STORM_SECONDS} s`,
      [
        `healthy partner alone         ${healthyLine(alone)}`,
        `healthy partner in the storm  ${healthyLine(beside)}${besideAtEnd.latencies.length > beside.latencies.length ? ` within ${HEALTHY_WAIT_MS / 1000} s of its last request, ${besideAtEnd.latencies.length} by the end (+${fmt(endSeconds)} s after the dead ones recovered)` : ''}`,
        `connections offered per dead origin in ${fmt(downSeconds)} s down: min ${down[0]}, median ${quantile(down, 0.5)}, max ${down[down.length - 1]}; total ${fmt(down.reduce((a, b) => a + b, 0))}`,
        `slow origins: connections ${slow.map((o) => o.connections()).join(', ')}; ${slowTimes.length} of ${STORM_SLOW * STORM_PER_ORIGIN} answered 200${slowTimes.length ? `, the last +${fmt((Math.max(...slowTimes) - stormStart) / 1000)} s after the storm began` : ''}`,
        `dead origins after they answer 204: ${dead.reduce((n, o) => n + o.held(), 0)} requests still held then answered at once; the first new request +${fmt(firstNew)} s; first callback +${fmt(first)} s, ${fmt(deadTimes.length)} of ${fmt(deadWanted)} arrived${allArrived ? `, the last +${fmt(last)} s` : ` within ${fmt(STORM_RECOVERY_MS / 1000)} s (BENCH_STORM_RECOVERY_S)`}`,
        `storm partner's callbacks in PostgreSQL at the end: ${statuses.join(', ')}`,
      ],
      [
        `storm: healthy p99 ${fmt(p99Alone)} ms alone → ${fmt(p99Beside)} ms in the storm   goal ≤ alone + 100 ms: ${verdict(Number.isFinite(p99Beside) ? p99Beside <= p99Alone + 100 : null)}`,
        `storm: healthy callbacks missing ${HEALTHY_WAIT_MS / 1000} s after the load ${beside.missing} of ${beside.accepted}${beside.failed.length ? ` (and ${beside.failed.length} API requests failed)` : ''}   goal none: ${verdict(beside.missing === 0 && beside.failed.length === 0)}`,
        `storm: connections per dead origin while down, max ${down[down.length - 1]}   goal ≤ 10: ${verdict(down[down.length - 1] <= 10)}${over ? ` (${over} of ${STORM_DEAD} origins above)` : ''}`,
        `storm: all ${fmt(deadWanted)} dead origins' callbacks arrived ${allArrived ? `+${fmt(last)} s` : 'not all'} after recovery   goal ≤ 60 s: ${verdict(allArrived && last <= 60)}`,
      ],
    );
  } finally {
    await Promise.all(origins.map((o) => o.close()));
  }
}

/**
 * BACKLOG_ORIGINS partner endpoints answering 204, one destination each; counts requests and
 * distinct webhook-ids, and notes when each distinct one first arrived (in arrival order).
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

/**
 * Backlog: BACKLOG_ROWS pending callbacks inserted while the service is stopped (it created the
 * schema, the partner and the company on a first start), spread evenly over BACKLOG_ORIGINS
 * healthy receivers; then the service starts and drains them. Redis used_memory and the service's
 * RSS are sampled every second.
 */
async function backlogScenario(baseline: number): Promise<void> {
  const n = BACKLOG_ROWS;
  const run = new ServiceRun();
  const rxs = await backlogReceivers(BACKLOG_ORIGINS, n);
  const redis = createRedis(REDIS_URL, 'bench-sampler');
  let sampler: NodeJS.Timeout | undefined;
  try {
    await run.start();
    const { partnerId, companyId } = await partnerWithCompany(apiClient(run.port), 'Backlog', `${rxs.urls[0]}/company`);
    await run.stop();
    const pg = run.pg!;
    const t0 = performance.now();
    for (let lo = 1; lo <= n; lo += BACKLOG_INSERT_CHUNK) {
      const hi = Math.min(n, lo + BACKLOG_INSERT_CHUNK - 1);
      await pg.query(
        `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
         SELECT $1, $2, 0, ($3::text[])[1 + g % cardinality($3::text[])] || '/backlog/' || g, $4, 'pending', now()
           FROM generate_series($5::int, $6::int) g`,
        [partnerId, companyId, rxs.urls, BODY, lo, hi],
      );
    }
    const inserted = (performance.now() - t0) / 1000;
    // As autovacuum would have by the time a real backlog had piled up: visibility map and statistics.
    await pg.query('VACUUM ANALYZE callbacks');

    const redisBefore = await usedMemory(redis);
    let redisPeak = redisBefore;
    const rssPeak = new Map<number, number>();
    let sampling = false;
    const sample = async () => {
      if (sampling) return;
      sampling = true;
      try {
        redisPeak = Math.max(redisPeak, await usedMemory(redis));
      } catch {
        // a missed sample; the next one counts
      } finally {
        sampling = false;
      }
      for (const pid of run.pids()) rssPeak.set(pid, Math.max(rssPeak.get(pid) ?? 0, rssMb(pid) || 0));
    };
    sampler = setInterval(() => void sample(), 1000);
    const started = performance.now();
    await run.start();
    const ready = performance.now();
    await sample();

    const deadline = Date.now() + BACKLOG_DEADLINE_MS;
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
      } else if (now - lastProgress > BACKLOG_STALL_MS) {
        ended = `stalled: nothing new for ${BACKLOG_STALL_MS / 1000} s`;
        break;
      }
      if (now > deadline) {
        ended = `deadline of ${fmt(BACKLOG_DEADLINE_MS / 1000)} s`;
        break;
      }
      while (nextTenth < 10 && lastCount >= (n * nextTenth) / 10) {
        const pids = run.pids();
        console.log(
          `  backlog: ${nextTenth * 10} % (${fmt(lastCount)}) at +${fmt((performance.now() - ready) / 1000)} s; Redis peak ${mb(redisPeak)}, service RSS peak ${pids.map((p) => fmt(rssPeak.get(p) ?? NaN)).join(' / ')} MB`,
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
    await sample();
    clearInterval(sampler);
    sampler = undefined;
    const hwm = run.pids().map(peakRssMb);
    const rss = run.pids().map((p, i) => Math.max(rssPeak.get(p) ?? 0, hwm[i] || 0));

    const k10 = Math.ceil(n / 10);
    const k90 = Math.floor((n * 9) / 10);
    const firstRate = arrived >= k10 && k10 > 1 ? (k10 - 1) / ((rxs.at(k10 - 1) - rxs.at(0)) / 1000) : NaN;
    const lastRate = arrived >= n && n - k90 > 1 ? (n - k90 - 1) / ((rxs.at(n - 1) - rxs.at(k90)) / 1000) : NaN;
    const overall = arrived >= n ? n / ((rxs.at(n - 1) - ready) / 1000) : NaN;
    const duplicates = rxs.requests() - arrived;
    const roles = SPLIT ? ['api', 'worker'] : ['all'];
    const redisDelta = redisPeak - redisBefore;
    const limit = 100 * 1024 * 1024;
    block(
      `backlog: ${fmt(n)} pending callbacks inserted before the service started, ${BACKLOG_ORIGINS === 1 ? `to one healthy destination (127.0.0.1:${rxs.ports[0]})` : `spread evenly over ${BACKLOG_ORIGINS} healthy destinations (127.0.0.1:${rxs.ports[0]}…, ${fmt(n / BACKLOG_ORIGINS)} each)`}`,
      [
        `inserted in ${fmt(inserted)} s (INSERT … SELECT generate_series, ${Math.ceil(n / BACKLOG_INSERT_CHUNK)} statements; then VACUUM ANALYZE)`,
        `service ready ${fmt((ready - started) / 1000)} s after its start; first callback +${arrived ? fmt((rxs.at(0) - ready) / 1000) : 'n/a'} s, ${ended}${arrived ? `, the last +${fmt((rxs.at(arrived - 1) - ready) / 1000)} s` : ''}`,
        `arrived ${fmt(arrived)} distinct webhook-ids in ${fmt(rxs.requests())} requests; PostgreSQL: ${fmt(dbDelivered)} delivered`,
        `drained ${fmt(overall)} callbacks/s from ready to the last (${fmt(overall / baseline, 2)}× baseline); first 10 % ${fmt(firstRate)}/s, last 10 % ${fmt(lastRate)}/s`,
        `Redis used_memory (INFO memory, each second; Redis is shared, so the absolute value counts every user's keys): ${mb(redisBefore)} before the service started, peak ${mb(redisPeak)} absolute, ${mb(redisDelta)} over before`,
        `service RSS peak (VmRSS each second, VmHWM at the end): ${rss.map((r, i) => `${fmt(r)} MB (${roles[i]})`).join(', ')}`,
      ],
      [
        `backlog: ${fmt(arrived)} of ${fmt(n)} arrived, ${fmt(duplicates)} twice or more, ${fmt(dbDelivered)} delivered in PostgreSQL   goal all, none twice: ${verdict(arrived === n && duplicates === 0 && dbDelivered >= n)}`,
        `backlog: drained ${fmt(overall)}/s = ${fmt(overall / baseline, 2)}× baseline   goal ≥ 0.6× (aim 0.9×): ${verdict(Number.isFinite(overall) ? overall / baseline >= 0.6 : null)}`,
        `backlog: last 10 % ${fmt(lastRate)}/s = ${fmt(lastRate / firstRate, 2)}× the first 10 % (${fmt(firstRate)}/s)   goal ≥ 0.8×: ${verdict(Number.isFinite(lastRate / firstRate) ? lastRate / firstRate >= 0.8 : null)}`,
        `backlog: Redis used_memory peak ${mb(redisPeak)} absolute, ${mb(redisDelta)} delta   goal ≤ 100 MB: ${verdict(redisPeak <= limit)} (absolute), ${verdict(redisDelta <= limit)} (delta)`,
        `backlog: service RSS peak ${rss.map((r) => `${fmt(r)} MB`).join(' / ')}   goal ≤ 200 MB: ${verdict(rss.every((r) => r > 0 && r <= 200))}`,
      ],
    );
  } finally {
    if (sampler) clearInterval(sampler);
    redis.disconnect();
    await run.cleanup();
    await rxs.close();
  }
}

async function main(): Promise<void> {
  const unknown = ONLY.filter((s) => !(SCENARIOS as readonly string[]).includes(s));
  if (unknown.length) throw new Error(`bench: BENCH_ONLY names ${unknown.join(', ')}; the scenarios are ${SCENARIOS.join(', ')}`);
  const rx = await receiver();
  const target = (p: string) => `http://127.0.0.1:${rx.port}${p}`;
  try {
    // Baseline: a bare got POST loop to the same receiver, 64 in flight.
    const agent = { http: new http.Agent({ keepAlive: true, maxSockets: 64 }) };
    const t0 = performance.now();
    await pool(BASELINE_REQUESTS, 64, async (i) => {
      await got.post(target(`/baseline/${i}`), { body: BODY, headers: { 'content-type': 'application/json' }, agent, retry: { limit: 0 }, followRedirect: false });
    });
    const baseline = BASELINE_REQUESTS / ((performance.now() - t0) / 1000);
    agent.http.destroy();

    const processes = SPLIT ? 'two service processes, ROLE=api and ROLE=worker' : 'one service process ROLE=all';
    console.log(`funding-service callback benchmark (loopback, ${processes}; settings given to the service: ${SETTINGS}, the rest its defaults)`);
    console.log(`  bare got POST loop (baseline, 64 in flight)  ${fmt(baseline)} req/s`);

    const shared = (['drain', 'api', 'latency', 'isolation', 'storm'] as const).filter(selected);
    if (shared.length) {
      const run = new ServiceRun();
      try {
        await run.start();
        const api = apiClient(run.port);
        const { partnerId, companyId } = await partnerWithCompany(api, 'Bench', target('/company'));
        const ctx: Ctx = { run, pg: run.pg!, api, rx, target, partnerId, companyId, baseline };
        if (selected('drain')) await drainScenario(ctx);
        if (selected('api')) await apiScenario(ctx);
        if (selected('latency')) await latencyScenario(ctx);
        if (selected('isolation')) await isolationScenario(ctx);
        if (selected('storm')) await stormScenario(ctx);
        const rss = run.pids().map((p) => fmt(peakRssMb(p)));
        console.log(`\n  peak RSS of the service process${SPLIT ? 'es' : ''} over ${shared.join(', ')}: ${rss.join(' MB (api), ')} MB${SPLIT ? ' (worker)' : ''}`);
      } finally {
        await run.cleanup();
      }
    }
    if (selected('backlog')) await backlogScenario(baseline);

    if (goals.length > 1 && ONLY.length !== 1) {
      console.log(`\ngoals (baseline ${fmt(baseline)} req/s)`);
      for (const g of goals) console.log(`  ${g}`);
    }
  } finally {
    await rx.close();
  }
}

// However the driver ends (even on an uncaught error), the services end with it; interrupted, it
// removes the runs' databases and Redis keys first.
process.once('exit', () => active.forEach((r) => r.killNow()));
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`bench: ${signal}, removing the runs' databases and Redis keys`);
    setTimeout(() => process.exit(130), 30_000).unref();
    void Promise.all([...active].map((r) => r.cleanup().catch((e: Error) => console.error(e.message)))).finally(() => process.exit(130));
  });
}

main().then(
  () => process.exit(0),
  (e: Error) => {
    console.error(e.message);
    process.exit(1);
  },
);
