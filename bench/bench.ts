// npm run bench: the service (ROLE=all, compiled; BENCH_SPLIT=1: ROLE=api + ROLE=worker) in child processes against the local
// PostgreSQL and Redis, a receiver on 127.0.0.1, and this process driving load. Loopback only;
// every loop is bounded in count and time.
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import path from 'node:path';
import got, { RequestError } from 'got';
import { Client } from 'pg';
import { deletePrefixKeys, withRedisOnce } from '../src/database/redis.js';

const BASE_DB = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const ADMIN = 'bench-admin-token-0123456789';
const BACKLOG = 20_000;
const API_CHANGES = 10_000; // each raises the limit: callbacks 0 and 2
const RATE = Number(process.env.BENCH_RATE ?? 500); // offered load for the latency run, callbacks per second
const RATE_SECONDS = 10;
const DEADLINE_MS = 180_000;
const DEAD_BACKLOG = 2_000; // pending callbacks to the dead destination in the isolation run
const HEALTHY_RATE = 10; // changes per second to the healthy destination in the isolation run
const HEALTHY_SECONDS = 20;
const PAIRED_WINDOW_MS = 10_000; // see BENCH_START_AT

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 1 });

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

async function until(fn: () => boolean | Promise<boolean>, what: string, timeoutMs = DEADLINE_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
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

function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/**
 * CPU time (µs, user + system) used so far by the service processes, Redis, PostgreSQL and this
 * process (the driver and the receivers), read from /proc (Linux; USER_HZ is 100 there). The
 * drain's figure per callback is the cost that decides throughput on a machine whose cores are
 * all busy, and varies far less from run to run than the rate itself.
 */
function cpuUsed(servicePids: number[]): { service: number; redis: number; postgres: number; bench: number } {
  const used = { service: 0, redis: 0, postgres: 0, bench: 0 };
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
    if (servicePids.includes(Number(pid))) used.service += us;
    else if (Number(pid) === process.pid) used.bench += us;
    else if (comm === 'redis-server') used.redis += us;
    else if (comm === 'postgres') used.postgres += us;
  }
  return used;
}

async function main(): Promise<void> {
  const rx = await receiver();
  const target = (p: string) => `http://127.0.0.1:${rx.port}${p}`;

  // 1. Baseline: a bare got POST loop to the same receiver, 64 in flight.
  const agent = { http: new http.Agent({ keepAlive: true, maxSockets: 64 }) };
  const body = JSON.stringify({ message: 0, withdrawalId: null, companyId: 'x', limitRequestId: null, loanId: null });
  let t0 = performance.now();
  await pool(20_000, 64, async (i) => {
    await got.post(target(`/baseline/${i}`), { body, headers: { 'content-type': 'application/json' }, agent, retry: { limit: 0 }, followRedirect: false });
  });
  const baseline = 20_000 / ((performance.now() - t0) / 1000);
  agent.http.destroy();

  // 2. The service in a child process, with its own database and queue prefix.
  const suffix = randomBytes(4).toString('hex');
  const dbUrl = BASE_DB.replace(/\/[^/]*$/, `/funding_bench_${suffix}`);
  const port = 3900 + Math.floor(Math.random() * 90);
  // The flags `npm start` runs the service with; BENCH_NODE_ARGS adds more, e.g.
  // "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the service processes.
  const nodeArgs = ['--max-semi-space-size=32', ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)];
  const startService = async (role: string, listenPort: number): Promise<ChildProcess> => {
    const child = spawn(process.execPath, [...nodeArgs, path.resolve(__dirname, '../src/main.js')], {
      env: {
        PATH: process.env.PATH ?? '',
        ROLE: role,
        PORT: String(listenPort),
        DATABASE_URL: dbUrl,
        REDIS_URL,
        QUEUE_PREFIX: `bench-${suffix}`,
        ADMIN_TOKEN: ADMIN,
        CALLBACK_ALLOW_HTTP: 'true',
        CALLBACK_ALLOW_PRIVATE_TARGETS: 'true',
        // Delivery and dashboard settings given to the bench go to the service (to compare them);
        // anything not given keeps the service's default (CALLBACK_CONCURRENCY included).
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => /^(CALLBACK|DASHBOARD)_/.test(k))),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => {
        // The service's own log lines (a circuit opening or closing, warnings) go through.
        for (const line of d.toString().split('\n')) if (line.trim() && !line.includes('ready:')) console.log(`  [${role}] ${line.trim()}`);
        if (d.toString().includes('ready:')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`service (ROLE=${role}) exited with ${code}`)));
    });
    return child;
  };
  // BENCH_SPLIT=1: one ROLE=api and one ROLE=worker process instead of one ROLE=all.
  const split = process.env.BENCH_SPLIT === '1';
  const children = split ? [await startService('api', port), await startService('worker', port + 100)] : [await startService('all', port)];
  // However the driver ends (even on an uncaught error), the services end with it.
  process.once('exit', () => children.forEach((c) => c.exitCode === null && c.kill('SIGKILL')));
  const api = got.extend({
    prefixUrl: `http://127.0.0.1:${port}`,
    agent: { http: new http.Agent({ keepAlive: true, maxSockets: 128 }) },
    retry: { limit: 0 },
  });
  const admin = { authorization: `Bearer ${ADMIN}` };
  const pg = new Client({ connectionString: dbUrl });
  await pg.connect();
  try {
    const partner = await api.post('admin/v1/partners', { headers: admin, json: { name: 'Bench' } }).json<{ id: string; apiKey: string }>();
    const partnerAuth = { authorization: `Bearer ${partner.apiKey}` };
    const company = await api.post('v1/companies', { headers: partnerAuth, json: { name: 'Bench', status_callback: target('/company') } }).json<{ id: string }>();
    const delivered = async () => Number((await pg.query(`SELECT count(*) AS n FROM callbacks WHERE status = 'delivered'`)).rows[0].n);

    // BENCH_ONLY=isolation runs the isolation scenario (6) alone; BENCH_ONLY=drain the backlog
    // drain (3) alone; BENCH_ONLY=latency the latency run (5) alone.
    const only = process.env.BENCH_ONLY === 'isolation';
    const drainOnly = process.env.BENCH_ONLY === 'drain';
    const latencyOnly = process.env.BENCH_ONLY === 'latency';
    let drain = NaN;
    let drainCpu = 'not measured';
    let apiRate = NaN;
    let apiRequestRate = NaN;
    let latencies: number[] = [NaN];
    let offered = NaN;
    const latencyLine = () =>
      `  latency API response → arrival at ${RATE}/s   p50 ${fmt(quantile(latencies, 0.5))} ms, p99 ${fmt(quantile(latencies, 0.99))} ms, max ${fmt(latencies[latencies.length - 1])} ms (offered ${fmt(offered)}/s)`;
    if (!only) {
    if (!latencyOnly) {
    // BENCH_START_AT=<epoch ms> (with BENCH_ONLY=drain): the drain starts then, so two builds'
    // drains run at the same moment on one machine. Each sees the same machine (its speed here
    // swings by a third between runs), so the ratio of their rates is steadier than either rate;
    // Redis's and PostgreSQL's CPU is then shared by both and not attributed.
    const startAt = Number(process.env.BENCH_START_AT ?? NaN);
    if (Number.isFinite(startAt)) await new Promise((r) => setTimeout(r, Math.max(0, startAt - Date.now())));
    // 3. Backlog drain: 20,000 pending records committed at once, to one destination, or spread
    //    over BENCH_ORIGINS receivers (destinations) of their own.
    const origins = Number(process.env.BENCH_ORIGINS ?? 1);
    const extra = await Promise.all(Array.from({ length: Math.max(0, origins - 1) }, () => receiver()));
    const ports = [rx.port, ...extra.map((r) => r.port)];
    await pg.query(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
       SELECT $1, $2, 0, 'http://127.0.0.1:' || ($3::int[])[1 + g % array_length($3::int[], 1)] || '/backlog/' || g, $4, 'pending', now()
         FROM generate_series(1, ${BACKLOG}) g`,
      [partner.id, company.id, ports, body],
    );
    const servicePids = children.map((c) => c.pid!);
    const cpuBefore = cpuUsed(servicePids);
    t0 = performance.now();
    await pg.query(`SELECT pg_notify('funding_callbacks', '')`);
    // Paired, the rate over the first PAIRED_WINDOW_MS is the one to compare: both runs are draining
    // then (the slower one's end, run alone, would flatter it).
    const windowCount = Number.isFinite(startAt) && drainOnly
      ? new Promise<number>((r) => setTimeout(() => r(delivered().catch(() => NaN)), PAIRED_WINDOW_MS))
      : Promise.resolve(NaN);
    await until(async () => (await delivered()) >= BACKLOG, 'backlog drained');
    drain = BACKLOG / ((performance.now() - t0) / 1000);
    const cpuAfter = cpuUsed(servicePids);
    const perCallback = (k: keyof typeof cpuAfter) => (cpuAfter[k] - cpuBefore[k]) / BACKLOG;
    drainCpu = Number.isFinite(startAt)
      ? `service ${fmt(perCallback('service'))} µs (Redis and PostgreSQL shared with the paired run)`
      : `service ${fmt(perCallback('service'))}, Redis ${fmt(perCallback('redis'))}, PostgreSQL ${fmt(perCallback('postgres'))}, receiver and driver ${fmt(perCallback('bench'))} µs`;
    await Promise.all(extra.map((r) => r.close()));
    if (drainOnly) {
      console.log(`  backlog of ${BACKLOG} pending records to ${origins} destination(s) drained  ${fmt(drain)} callbacks/s (baseline ${fmt(baseline)} req/s)`);
      console.log(`  CPU per callback drained: ${drainCpu}`);
      const early = await windowCount;
      if (Number.isFinite(early)) console.log(`  paired: ${fmt(early / (PAIRED_WINDOW_MS / 1000))} callbacks/s over the first ${PAIRED_WINDOW_MS / 1000} s`);
      return;
    }

    // 4. Through the API: concurrent credit-limit changes over 64 companies (changes of one
    //    company serialise on its row lock, as they must), each committing callbacks 0 and 2.
    const spread = (
      await pg.query(
        `INSERT INTO companies (partner_id, name, currency, callback_url, credit_status)
         SELECT $1, 'T' || g, 'EUR', $2, 'active' FROM generate_series(1, 64) g RETURNING id`,
        [partner.id, target('/company')],
      )
    ).rows.map((r) => r.id as string);
    const before = rx.count();
    t0 = performance.now();
    await pool(API_CHANGES, 64, async (i) => {
      await api.patch(`admin/v1/companies/${spread[i % 64]}/credit`, { headers: admin, json: { creditLimit: String(1000 + i) } });
    });
    const apiDone = performance.now();
    const expected = before + 2 * API_CHANGES;
    await until(() => rx.count() >= expected, 'API-driven callbacks');
    apiRate = (2 * API_CHANGES) / ((performance.now() - t0) / 1000);
    apiRequestRate = API_CHANGES / ((apiDone - t0) / 1000);
    }

    // 5. Latency at a fixed offered load: one company per request, so each callback is matched
    //    to the API response that caused it.
    const n = RATE * RATE_SECONDS;
    const ids = (
      await pg.query(
        `INSERT INTO companies (partner_id, name, currency, callback_url, credit_status)
         SELECT $1, 'L' || g, 'EUR', $2 || g, 'active' FROM generate_series(0, ${n - 1}) g RETURNING id, name`,
        [partner.id, target('/lat/')],
      )
    ).rows.sort((a, b) => Number(a.name.slice(1)) - Number(b.name.slice(1)));
    const responded = new Array<number>(n);
    const start = performance.now();
    const inflight: Promise<void>[] = [];
    const failures: string[] = [];
    for (let i = 0; i < n; i++) {
      const due = start + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
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
    latencies = ids.map((_, i) => rx.arrivals.get(`/lat/${i}`)! - responded[i]).sort((a, b) => a - b);
    offered = n / ((performance.now() - start) / 1000);
    if (process.env.BENCH_DUMP) {
      // Per latency callback, epoch ms: due, API response, committed row's tx start, attempt
      // started, arrival at the receiver. Finds the stage behind a slow one.
      const epoch = (t: number) => (performance.timeOrigin + t).toFixed(1);
      const stages = new Map(
        (
          await pg.query(
            `SELECT c.url, extract(epoch FROM c.created_at) * 1000 AS created, extract(epoch FROM a.started_at) * 1000 AS started
               FROM callbacks c JOIN callback_attempts a ON a.callback_id = c.id WHERE c.url LIKE '%/lat/%'`,
          )
        ).rows.map((r) => [r.url.slice(r.url.lastIndexOf('/') + 1), r]),
      );
      const lines = ids.map((_, i) => {
        const st = stages.get(String(i));
        return [i, epoch(start + (i * 1000) / RATE), epoch(responded[i]), st?.created, st?.started, epoch(rx.arrivals.get(`/lat/${i}`)!)].join(' ');
      });
      writeFileSync(process.env.BENCH_DUMP, lines.join('\n') + '\n');
    }
    if (latencyOnly) {
      console.log(`${latencyLine()} (baseline ${fmt(baseline)} req/s)`);
      return;
    }

    }

    console.log('');
    const processes = split ? 'two service processes, ROLE=api and ROLE=worker' : 'one service process ROLE=all';
    console.log(`funding-service callback benchmark (loopback, ${processes}, CALLBACK_CONCURRENCY=${process.env.CALLBACK_CONCURRENCY ?? "the service's default"})`);
    console.log(`  bare got POST loop (baseline, 64 in flight)  ${fmt(baseline)} req/s`);
    console.log(`  backlog of ${BACKLOG} pending records drained  ${fmt(drain)} callbacks/s  (${fmt((drain / baseline) * 100)} % of baseline)`);
    console.log(`    CPU per callback drained: ${drainCpu}`);
    console.log(`  driven through the API (64 in flight)        ${fmt(apiRate)} callbacks/s delivered end to end (${fmt(apiRequestRate)} API changes/s)`);
    console.log(latencyLine());
    // 6. Isolation: a destination that accepts and never answers, with DEAD_BACKLOG pending
    //    callbacks, beside a healthy one changed HEALTHY_RATE times a second (one company per
    //    change). Healthy latency alone, then with the dead neighbour; the connections the dead
    //    one is offered while down; after it answers again, its first and last callback.
    const healthyLatency = async (label: string) => {
      const m = HEALTHY_RATE * HEALTHY_SECONDS;
      const rows = (
        await pg.query(
          `INSERT INTO companies (partner_id, name, currency, callback_url, credit_status)
           SELECT $1, $2 || g, 'EUR', $3 || g, 'active' FROM generate_series(0, ${m - 1}) g RETURNING id, name`,
          [partner.id, label, target(`/${label}/`)],
        )
      ).rows.sort((a, b) => Number(a.name.slice(label.length)) - Number(b.name.slice(label.length)));
      const sent = new Array<number>(m);
      const begin = performance.now();
      const calls: Promise<unknown>[] = [];
      for (let i = 0; i < m; i++) {
        const wait = begin + (i * 1000) / HEALTHY_RATE - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        calls.push(api.patch(`admin/v1/companies/${rows[i].id}/credit`, { headers: admin, json: { creditStatus: 'suspended' } }).then(() => (sent[i] = performance.now())));
      }
      await Promise.all(calls);
      await until(() => rows.every((_, i) => rx.arrivals.has(`/${label}/${i}`)), `${label} callbacks`);
      return rows.map((_, i) => rx.arrivals.get(`/${label}/${i}`)! - sent[i]).sort((a, b) => a - b);
    };
    const alone = await healthyLatency('alone');
    const dead = await deadDestination();
    await pg.query(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
       SELECT $1, $2, 0, $3 || g, $4, 'pending', now() FROM generate_series(1, ${DEAD_BACKLOG}) g`,
      [partner.id, company.id, `http://127.0.0.1:${dead.port}/dead/`, body],
    );
    await pg.query(`SELECT pg_notify('funding_callbacks', '')`);
    const outageStart = performance.now();
    const withDead = await healthyLatency('beside');
    // The outage lasts at least until the healthy run is over and the circuit has had time to
    // open and probe (the first attempts hang for CALLBACK_TIMEOUT_MS, 15 s by default).
    await until(() => performance.now() - outageStart > 40_000, 'the outage to last 40 s', 60_000);
    const downConnections = dead.connections();
    const recovered = performance.now();
    dead.recover();
    await until(async () => Number((await pg.query(`SELECT count(*) AS n FROM callbacks WHERE url LIKE '%/dead/%' AND status = 'delivered'`)).rows[0].n) >= DEAD_BACKLOG, 'the dead backlog after recovery', 300_000);
    const firstAfter = Math.min(...dead.arrivals) - recovered;
    const lastAfter = Math.max(...dead.arrivals) - recovered;
    const backlogAfterProbe = Math.max(...dead.arrivals) - Math.min(...dead.arrivals);
    await dead.close();

    const rss = children.map((c) => fmt(peakRssMb(c.pid!))).join(' MB (api), ') + ' MB' + (split ? ' (worker)' : '');
    const pq = (l: number[]) => `p50 ${fmt(quantile(l, 0.5))} ms, p99 ${fmt(quantile(l, 0.99))} ms`;
    console.log(`  isolation: healthy destination at ${HEALTHY_RATE}/s alone            ${pq(alone)}`);
    console.log(`  isolation: same, beside a dead one with ${DEAD_BACKLOG} pending   ${pq(withDead)}`);
    console.log(`  isolation: connections offered to the dead one in ${fmt((recovered - outageStart) / 1000)} s down  ${downConnections}`);
    console.log(`  isolation: after it answers again: first callback +${fmt(firstAfter / 1000)} s, last +${fmt(lastAfter / 1000)} s (${fmt(backlogAfterProbe / 1000)} s from the first successful probe to its last callback)`);
    console.log(`  peak RSS of the service process${split ? 'es' : '  '}            ${rss}`);
  } finally {
    await pg.end();
    await Promise.all(
      children.map((c) => {
        const exited = new Promise((r) => c.once('exit', r));
        c.kill('SIGTERM');
        return exited;
      }),
    );
    const admin = new Client({ connectionString: BASE_DB });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS funding_bench_${suffix} WITH (FORCE)`);
    await admin.end();
    // The run's BullMQ keys go too (retries still delayed, the queue's meta and events).
    await withRedisOnce(REDIS_URL, (redis) => deletePrefixKeys(redis, `bench-${suffix}`));
    await rx.close();
  }
}

main().then(
  () => process.exit(0),
  (e: Error) => {
    console.error(e.message);
    process.exit(1);
  },
);
