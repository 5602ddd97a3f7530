// npm run bench:capacity: the measurements behind the README's capacity model, as one table.
// The service runs compiled in child processes against BENCH_DATABASE_URL's server and
// BENCH_REDIS_URL, with a database and queue prefix of its own; a receiver on 127.0.0.1 answers
// 204. Loopback only; every wait is bounded.
//
// CAPACITY_PARTS picks what runs (default all):
//   footprint  PostgreSQL statements, rows and WAL per change; bytes per row; Redis bytes per
//              job in the queue and per callback not yet due. Counts and sizes: CPU load on the
//              machine does not change them.
//   timing     callbacks per CPU-second of a ROLE=worker and of a ROLE=api process, wall-clock
//              rates, and a backlog drain with and without retention pruning running beside it.
//              Needs a quiet machine.
// Statement counts come from pg_stat_statements when the server has it loaded
// (shared_preload_libraries); otherwise from pg_stat_database (transactions and rows only). WAL
// is the server's pg_current_wal_lsn() delta: on a server other databases write to, it counts
// their WAL too, so measure on a quiet or private server.
import { Queue } from 'bullmq';
import { Got } from 'got';
import {
  createRedis,
  isCluster,
  redisNamespace,
  RedisConnection,
  withRedisOnce,
} from '../src/platform/database/redis.js';
import { CALLBACK_QUEUE } from '../src/delivery/callback-queue.js';
import { loopbackReceivers } from './receivers.js';
import {
  adminHeaders,
  apiClient,
  BASE_DB,
  fmt,
  freePort,
  pool,
  REDIS_URL,
  until as waitFor,
} from './support/common.js';
import { runMain, ServiceRun } from './support/service.js';
import { cpuSeconds } from './support/system.js';

const PARTS = new Set((process.env.CAPACITY_PARTS ?? 'footprint,timing').split(',').map((s) => s.trim()));
const FOOTPRINT_CHANGES = 2_000; // each raises a credit limit: callbacks 0 and 2
const QUEUED = 10_000;
const TIMING_CHANGES = 10_000;
const OLD_DELIVERED = 200_000; // rows past the retention, pruned while a backlog drains
const BACKLOG = 20_000;
const DEADLINE_MS = 300_000;

const rows: [string, string, string][] = [];
const report = (what: string, value: string, note = '') => rows.push([what, value, note]);
const until = (fn: () => boolean | Promise<boolean>, what: string, timeoutMs = DEADLINE_MS) =>
  waitFor(fn, what, timeoutMs);

/**
 * Partner endpoints answering 204 on ORIGINS ports: so many destinations (origins) that none
 * holds callbacks back for want of a slot (CALLBACK_DESTINATION_CONCURRENCY each), as with the
 * many partners of a deployment.
 */
const ORIGINS = 16;
async function receiver() {
  let count = 0;
  const receivers = await loopbackReceivers(ORIGINS, () => count++);
  return {
    /** One URL per origin; rows pick theirs with `($n::text[])[1 + g % ORIGINS]`. */
    urls: receivers.urls,
    count: () => count,
    close: receivers.close,
  };
}

/** The bench's service run (bench/support/service.ts) with what the measurements here ask of its database. */
class Run extends ServiceRun {
  constructor() {
    super('capacity');
  }

  async q<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
    return (await this.pg!.query(text, params)).rows as T[];
  }

  /** A partner and `n` active companies whose credit changes each send callbacks 0 and 2 to `urls`. */
  async companies(api: Got, n: number, urls: string[]): Promise<string[]> {
    const partner = await api
      .post('admin/v1/partners', { headers: adminHeaders, json: { name: 'Capacity' } })
      .json<{ id: string }>();
    return (
      await this.q<{ id: string }>(
        `INSERT INTO companies (partner_id, name, currency, callback_url, credit_status)
         SELECT $1, 'C' || g, 'EUR', ($2::text[])[1 + g % ${ORIGINS}], 'active' FROM generate_series(1, $3::int) g RETURNING id`,
        [partner.id, urls, n],
      )
    ).map((r) => r.id);
  }
}

/** Raises the credit limit of the companies in turn: each change commits callbacks 0 and 2. */
async function changes(api: Got, companies: string[], n: number, width: number, from = 0): Promise<void> {
  await pool(n, width, async (i) => {
    await api.patch(`admin/v1/companies/${companies[i % companies.length]}/credit`, {
      headers: adminHeaders,
      json: { creditLimit: String(1000 + from + i) },
    });
  });
}

/** Bytes of every key of the namespace (MEMORY USAGE, exact), the events stream apart. */
async function namespaceBytes(prefix: string): Promise<{ keys: number; bytes: number; events: number }> {
  return withRedisOnce(REDIS_URL, async (redis: RedisConnection) => {
    const out = { keys: 0, bytes: 0, events: 0 };
    const pattern = `${redisNamespace(prefix).replace(/[*?[\]\\]/g, '\\$&')}:*`;
    for (const node of isCluster(redis) ? redis.nodes('master') : [redis]) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        for (const key of keys) {
          const bytes = Number(await node.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
          if (key.endsWith(':events')) out.events += bytes;
          else out.bytes += bytes;
          out.keys++;
        }
        cursor = next;
      } while (cursor !== '0');
    }
    return out;
  });
}

/** The deployment's callback queue, read only: its job counts. */
function openQueue(prefix: string): { queue: Queue; close: () => Promise<void> } {
  const connection = createRedis(REDIS_URL, 'capacity-probe');
  const queue = new Queue(CALLBACK_QUEUE, { connection, prefix: redisNamespace(prefix) });
  return { queue, close: async () => (await queue.close().catch(() => undefined), connection.disconnect()) };
}

/** Jobs in the queue not finished (waiting, prioritized, delayed, active). */
/** Callbacks the queue's jobs hold (a job holds those of one admission pass; one before that). */
async function queuedCallbacks(queue: Queue): Promise<number> {
  const jobs = await queue.getJobs(['wait', 'prioritized', 'delayed', 'active', 'waiting-children']);
  const held = (data: unknown) => (data as { callbackIds?: unknown } | undefined)?.callbackIds;
  return jobs.reduce((n, j) => {
    const ids = held(j?.data);
    return n + (Array.isArray(ids) ? ids.length : 1);
  }, 0);
}

/** Callbacks held in the queue once they reach `target` or have not changed for 5 s (at most 2 min). */
async function settledCallbacks(queue: Queue, target: number): Promise<number> {
  const deadline = Date.now() + 120_000;
  let last = await queuedCallbacks(queue);
  let since = Date.now();
  while (last < target && Date.now() - since < 5000 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    const now = await queuedCallbacks(queue);
    if (now !== last) since = Date.now();
    last = now;
  }
  return last;
}

/**
 * Scripts (EVALSHA) and other commands the Redis server has run (commands inside scripts count
 * there too), and its CPU seconds: the whole server's, every master of a cluster.
 */
async function redisCommands(): Promise<{ scripts: number; commands: number; cpu: number }> {
  return withRedisOnce(REDIS_URL, async (redis) => {
    const out = { scripts: 0, commands: 0, cpu: 0 };
    for (const node of isCluster(redis) ? redis.nodes('master') : [redis]) {
      for (const m of (await node.info('commandstats')).matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)) {
        if (m[1] === 'info') continue;
        if (/^eval/.test(m[1])) out.scripts += Number(m[2]);
        else out.commands += Number(m[2]);
      }
      const cpu = await node.info('cpu');
      out.cpu += Number(/used_cpu_user:([\d.]+)/.exec(cpu)?.[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(cpu)?.[1]);
    }
    return out;
  });
}

interface DbSnapshot {
  lsn: string;
  db: Record<string, number>;
  statements: Map<string, { query: string; calls: number; wal: number; fpi: number }> | null;
  redis: { scripts: number; commands: number; cpu: number };
  tables: Map<string, { seqScans: number; seqRows: number; idxRows: number }>;
}

async function snapshot(run: Run): Promise<DbSnapshot> {
  const [{ lsn }] = await run.q<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
  const [db] = await run.q<Record<string, string>>(
    `SELECT xact_commit, xact_rollback, tup_returned, tup_fetched, tup_inserted, tup_updated, tup_deleted FROM pg_stat_database WHERE datname = current_database()`,
  );
  let statements: DbSnapshot['statements'] = null;
  try {
    const list = await run.q<{ queryid: string; query: string; calls: string; wal_bytes: string; wal_fpi: string }>(
      `SELECT queryid::text, query, calls, wal_bytes, wal_fpi FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = current_database() AND s.toplevel`,
    );
    statements = new Map(
      list.map((s) => [
        s.queryid,
        { query: s.query, calls: Number(s.calls), wal: Number(s.wal_bytes), fpi: Number(s.wal_fpi) },
      ]),
    );
  } catch {
    // not loaded on this server: transactions and rows from pg_stat_database only
  }
  const tables = new Map(
    (
      await run.q<{ relname: string; seq_scan: string; seq_tup_read: string; idx_tup_fetch: string }>(
        `SELECT relname, seq_scan, seq_tup_read, coalesce(idx_tup_fetch, 0) AS idx_tup_fetch FROM pg_stat_user_tables`,
      )
    ).map((t) => [
      t.relname,
      { seqScans: Number(t.seq_scan), seqRows: Number(t.seq_tup_read), idxRows: Number(t.idx_tup_fetch) },
    ]),
  );
  return {
    redis: await redisCommands(),
    tables,
    lsn,
    db: Object.fromEntries(Object.entries(db).map(([k, v]) => [k, Number(v)])),
    statements,
  };
}

/** The driver's own queries (snapshots, waits) are left out of the statement counts. */
const DRIVER = /pg_stat_|pg_current_wal_lsn|capacity_probe|pg_column_size|pg_relation_size|generate_series|pg_notify/;

async function measureFootprint(): Promise<void> {
  const rx = await receiver();
  const run = new Run();
  const port = await freePort();
  try {
    const all = await run.startRole('all', port);
    const api = apiClient(port);
    const companies = await run.companies(api, 64, rx.urls('/company'));
    await run.q('CREATE EXTENSION IF NOT EXISTS pg_stat_statements').catch(() => undefined);
    const delivered = async (n: number) =>
      Number(
        (
          await run.q<{ capacity_probe: string }>(
            `SELECT count(*) AS capacity_probe FROM callbacks WHERE status = 'delivered'`,
          )
        )[0].capacity_probe,
      ) >= n;

    // Warm-up (connections, plans, JIT of the service), then the measured window.
    await changes(api, companies, 200, 16);
    await until(() => rx.count() >= 400, 'warm-up callbacks');
    await until(() => delivered(400), 'warm-up recorded');
    // Plans as in production, where autovacuum analyzes (the tables are new here).
    await run.q('ANALYZE');
    await new Promise((r) => setTimeout(r, 1500)); // pg_stat_database is flushed by idle backends within 1 s
    const before = await snapshot(run);
    await changes(api, companies, FOOTPRINT_CHANGES, 16, 200);
    await until(() => rx.count() >= 400 + 2 * FOOTPRINT_CHANGES, 'callbacks');
    await until(() => delivered(400 + 2 * FOOTPRINT_CHANGES), 'deliveries recorded');
    await new Promise((r) => setTimeout(r, 1500));
    const after = await snapshot(run);

    const per = (k: string) => (after.db[k] - before.db[k]) / FOOTPRINT_CHANGES;
    const [{ wal }] = await run.q<{ wal: string }>(`SELECT pg_wal_lsn_diff($1, $2)::bigint AS wal`, [
      after.lsn,
      before.lsn,
    ]);
    const note = `${FOOTPRINT_CHANGES} credit changes, 2 callbacks each, 16 in flight`;
    if (after.statements && before.statements) {
      let calls = 0;
      let walBytes = 0;
      let fpi = 0;
      const top: { query: string; calls: number }[] = [];
      for (const [id, s] of after.statements) {
        if (DRIVER.test(s.query)) continue;
        const b = before.statements.get(id);
        const d = { calls: s.calls - (b?.calls ?? 0), wal: s.wal - (b?.wal ?? 0) };
        calls += d.calls;
        walBytes += d.wal;
        fpi += s.fpi - (b?.fpi ?? 0);
        if (d.calls > 0) top.push({ query: s.query.replace(/\s+/g, ' ').slice(0, 70), calls: d.calls });
      }
      report(
        'PostgreSQL statements per change',
        fmt(calls / FOOTPRINT_CHANGES, 2),
        `${note}; pg_stat_statements, BEGIN/COMMIT included`,
      );
      report(
        '  of which WAL-logged by statements',
        `${fmt(walBytes / FOOTPRINT_CHANGES, 0)} B`,
        `pg_stat_statements wal_bytes; ${fmt(fpi / FOOTPRINT_CHANGES, 2)} full-page images per change`,
      );
      for (const s of top.sort((a, b) => b.calls - a.calls).slice(0, 12))
        report(`    ${fmt(s.calls / FOOTPRINT_CHANGES, 2)} ×`, s.query, '');
    } else {
      report('PostgreSQL statements per change', 'n/a', 'pg_stat_statements not loaded on this server');
    }
    report('PostgreSQL transactions per change', fmt(per('xact_commit') + per('xact_rollback'), 2), note);
    report(
      'Rows inserted / updated / deleted per change',
      `${fmt(per('tup_inserted'), 2)} / ${fmt(per('tup_updated'), 2)} / ${fmt(per('tup_deleted'), 2)}`,
      'pg_stat_database',
    );
    report(
      'Rows read (returned / fetched) per change',
      `${fmt(per('tup_returned'), 1)} / ${fmt(per('tup_fetched'), 1)}`,
      'pg_stat_database',
    );
    for (const [table, t] of after.tables) {
      const b = before.tables.get(table);
      const seq = (t.seqRows - (b?.seqRows ?? 0)) / FOOTPRINT_CHANGES;
      const idx = (t.idxRows - (b?.idxRows ?? 0)) / FOOTPRINT_CHANGES;
      if (seq + idx >= 0.5)
        report(
          `  ${table}: rows read per change`,
          `${fmt(idx, 1)} by index, ${fmt(seq, 1)} by sequential scan`,
          `${fmt((t.seqScans - (b?.seqScans ?? 0)) / FOOTPRINT_CHANGES, 2)} sequential scans per change`,
        );
    }
    const r = (k: 'scripts' | 'commands' | 'cpu') => (after.redis[k] - before.redis[k]) / FOOTPRINT_CHANGES;
    report(
      'Redis scripts + other commands per change',
      `${fmt(r('scripts'), 1)} + ${fmt(r('commands'), 1)}`,
      `${fmt(r('cpu') * 1e6, 0)} µs of Redis CPU per change; INFO, the whole server (commands inside scripts count too)`,
    );
    report(
      'WAL per change',
      `${fmt(Number(wal) / FOOTPRINT_CHANGES, 0)} B`,
      'pg_current_wal_lsn delta: the whole server',
    );

    for (const table of ['callbacks', 'callback_attempts', 'companies']) {
      const [r] = await run.q<{ n: string; tuple: string; heap: string; idx: string }>(
        `SELECT count(*) AS n, avg(pg_column_size(t.*)) AS tuple, pg_relation_size('${table}') AS heap, pg_indexes_size('${table}') AS idx FROM ${table} t`,
      );
      report(
        `${table}: bytes per row`,
        `${fmt(Number(r.tuple), 0)} B tuple; ${fmt(Number(r.heap) / Number(r.n), 0)} B heap + ${fmt(Number(r.idx) / Number(r.n), 0)} B indexes`,
        `${r.n} rows, before vacuum`,
      );
    }
    const kept = await namespaceBytes(run.prefix);
    report(
      'Redis after delivery, per delivered callback',
      `${fmt(kept.bytes / (400 + 2 * FOOTPRINT_CHANGES), 0)} B`,
      `${kept.keys} keys (completed jobs kept for the dashboard, queue meta); the events stream apart`,
    );
    await run.stopChild(all);

    // Redis per queued callback: the whole service with its queue paused, so the jobs it adds stay
    // queued (a worker must run: admission may size what it lets in by the workers' slots), with
    // room for all of them at their destinations. How many of the callbacks the service puts in
    // Redis is its business (all of them, or as many as its admission lets in; the rest wait in
    // PostgreSQL): the callbacks its jobs hold are counted in the queue itself, and the bytes are per callback there.
    const paused = await run.startRole('all', port, { CALLBACK_DESTINATION_CONCURRENCY: '10000' });
    const [{ partner_id: partnerId, id: companyId }] = await run.q<{ partner_id: string; id: string }>(
      'SELECT partner_id, id FROM companies LIMIT 1',
    );
    const body = JSON.stringify({ message: 0, withdrawalId: null, companyId, limitRequestId: null, loanId: null });
    const insert = (due: string) =>
      run.q(
        `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
         SELECT $1, $2, 0, ($3::text[])[1 + g % cardinality($3::text[])] || g, $4, 'pending', ${due} FROM generate_series(1, ${QUEUED}) g`,
        [partnerId, companyId, rx.urls('/queued/'), body],
      );
    const q = openQueue(run.prefix);
    await q.queue.pause();
    const base = await namespaceBytes(run.prefix);
    const jobs0 = await queuedCallbacks(q.queue);
    await insert('now()');
    await run.q(`SELECT pg_notify('funding_callbacks', '')`);
    const jobs1 = await settledCallbacks(q.queue, jobs0 + QUEUED);
    const waiting = await namespaceBytes(run.prefix);
    await insert(`now() + interval '1 hour'`);
    await run.q(`SELECT pg_notify('funding_callbacks', '')`);
    const jobs2 = await settledCallbacks(q.queue, jobs1 + QUEUED);
    const delayed = await namespaceBytes(run.prefix);
    await q.close();
    report(
      'Redis per admitted callback in the queue, due now',
      jobs1 > jobs0 ? `${fmt((waiting.bytes - base.bytes) / (jobs1 - jobs0), 0)} B` : 'n/a',
      `${fmt(jobs1 - jobs0)} callbacks in Redis jobs for ${fmt(QUEUED)} due (the rest wait in PostgreSQL), MEMORY USAGE of the namespace's keys`,
    );
    report(
      'Redis per callback not yet due (a retry waiting)',
      `${fmt((delayed.bytes - waiting.bytes) / QUEUED, 0)} B`,
      `${fmt(QUEUED)} callbacks due in 1 h: ${fmt(jobs2 - jobs1)} of them in Redis jobs`,
    );
    await run.stopChild(paused);
    report(
      'Redis events stream (fixed: BullMQ caps it)',
      `${fmt(delayed.events / 1024, 0)} KiB`,
      'per deployment, whatever the load',
    );
  } finally {
    await run.cleanup();
    await rx.close();
  }
}

async function measureTiming(): Promise<void> {
  const rx = await receiver();
  const run = new Run();
  const [port, workerPort] = [await freePort(), await freePort()];
  try {
    // API and worker in their own processes: each one's CPU time is its role's cost.
    const apiProc = await run.startRole('api', port);
    const workerProc = await run.startRole('worker', workerPort);
    const api = apiClient(port);
    const companies = await run.companies(api, 64, rx.urls('/company'));
    await changes(api, companies, 500, 64);
    await until(() => rx.count() >= 1000, 'warm-up callbacks');
    const cpu0 = [cpuSeconds(apiProc.pid!), cpuSeconds(workerProc.pid!)];
    const t0 = performance.now();
    await changes(api, companies, TIMING_CHANGES, 64, 500);
    const apiWall = (performance.now() - t0) / 1000;
    await until(() => rx.count() >= 1000 + 2 * TIMING_CHANGES, 'callbacks');
    const wall = (performance.now() - t0) / 1000;
    const cpu1 = [cpuSeconds(apiProc.pid!), cpuSeconds(workerProc.pid!)];
    const callbacks = 2 * TIMING_CHANGES;
    const note = `${TIMING_CHANGES} changes through the API, 64 in flight`;
    report(
      'Worker: callbacks per CPU-second',
      fmt(callbacks / (cpu1[1] - cpu0[1]), 0),
      `${note}; ROLE=worker process, user+system time`,
    );
    report(
      'API: changes per CPU-second',
      fmt(TIMING_CHANGES / (cpu1[0] - cpu0[0]), 0),
      `ROLE=api process (HTTP, domain transaction, relay); ×2 callbacks recorded`,
    );
    report(
      'Wall clock: API changes/s, callbacks delivered/s',
      `${fmt(TIMING_CHANGES / apiWall, 0)}, ${fmt(callbacks / wall, 0)}`,
      'both processes and PostgreSQL share the machine',
    );

    // A backlog drain, then the same with retention pruning old rows beside it.
    const [{ partner_id: partnerId, id: companyId }] = await run.q<{ partner_id: string; id: string }>(
      'SELECT partner_id, id FROM companies LIMIT 1',
    );
    const body = JSON.stringify({ message: 0, withdrawalId: null, companyId, limitRequestId: null, loanId: null });
    const drain = async (tag: string): Promise<number> => {
      const start = rx.count();
      await run.q(
        `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
         SELECT $1, $2, 0, ($3::text[])[1 + g % ${ORIGINS}] || g, $4, 'pending', now() FROM generate_series(1, ${BACKLOG}) g`,
        [partnerId, companyId, rx.urls(`/${tag}/`), body],
      );
      const t = performance.now();
      await run.q(`SELECT pg_notify('funding_callbacks', '')`);
      await until(() => rx.count() >= start + BACKLOG, `${tag} backlog drained`);
      return BACKLOG / ((performance.now() - t) / 1000);
    };
    // Both drains run on freshly started processes over the same tables: first with a retention
    // that spares the old rows, then with a worker on the default one, which prunes them (after
    // its first-pass delay, a few seconds) while the backlog drains.
    await run.stopChild(workerProc);
    await run.stopChild(apiProc);
    const sparing = { CALLBACK_RETENTION: '3650d' };
    let procs = [await run.startRole('api', port, sparing), await run.startRole('worker', workerPort, sparing)];
    // Old delivered callbacks with an attempt each, past the default 30 d retention.
    await run.q(
      `WITH c AS (
         INSERT INTO callbacks (partner_id, company_id, message, url, body, status, attempt_count, created_at, delivered_at)
         SELECT $1, $2, 0, $3, $4, 'delivered', 1, now() - interval '40 days', now() - interval '40 days' FROM generate_series(1, ${OLD_DELIVERED}) g
         RETURNING id, partner_id)
       INSERT INTO callback_attempts (callback_id, partner_id, number, started_at, duration_ms, status_code) SELECT id, partner_id, 1, now() - interval '40 days', 5, 204 FROM c`,
      [partnerId, companyId, rx.urls('/old')[0], body],
    );
    await run.q('VACUUM ANALYZE callbacks');
    await run.q('VACUUM ANALYZE callback_attempts');
    const old = async () =>
      Number(
        (
          await run.q<{ capacity_probe: string }>(
            `SELECT count(*) AS capacity_probe FROM callbacks WHERE delivered_at < now() - interval '30 days'`,
          )
        )[0].capacity_probe,
      );
    const quiet = await drain('quiet');
    if ((await old()) !== OLD_DELIVERED) throw new Error('capacity: old rows were pruned during the quiet drain');
    for (const p of procs) await run.stopChild(p);
    procs = [await run.startRole('api', port, sparing), await run.startRole('worker', workerPort)];
    await until(async () => (await old()) < OLD_DELIVERED, 'pruning to start', 60_000);
    const oldBefore = await old();
    const t = performance.now();
    const pruning = await drain('pruning');
    const oldAfter = await old();
    const pruneRate = (oldBefore - oldAfter) / ((performance.now() - t) / 1000);
    report(
      'Backlog drain, callbacks/s: alone / while pruning',
      `${fmt(quiet, 0)} / ${fmt(pruning, 0)}`,
      `${BACKLOG} pending rows; pruning ${fmt(pruneRate, 0)} old callbacks/s (+ as many attempts) meanwhile${oldAfter === 0 ? ', but it ended before the drain did' : ''}`,
    );
    for (const p of procs) await run.stopChild(p);
  } finally {
    await run.cleanup();
    await rx.close();
  }
}

async function main(): Promise<void> {
  if (PARTS.has('footprint')) await measureFootprint();
  if (PARTS.has('timing')) await measureTiming();
  const width = Math.max(...rows.map((r) => r[0].length));
  const valueWidth = Math.max(...rows.map((r) => (r[2] ? r[1].length : 0)));
  console.log(
    `\nfunding-service capacity (PostgreSQL ${new URL(BASE_DB).host}, Redis ${REDIS_URL}, ${new Date().toISOString()})`,
  );
  for (const [what, value, note] of rows)
    console.log(`  ${what.padEnd(width)}  ${note ? value.padEnd(valueWidth) : value}${note ? `  ${note}` : ''}`);
}

runMain('capacity', main);
