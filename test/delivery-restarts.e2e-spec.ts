import { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { CallbackQueue } from '../src/delivery/callback-queue.js';
import { CallbackRelay } from '../src/delivery/callback-relay.js';
import { RELAY_TIMEOUT_MS } from '../src/delivery/relay-connection.js';
import { buildService, sparePort, startRedis, startService, stop, workerEnv } from './support/processes.js';
import { Received, Receiver, webhookHeaders } from './support/receiver.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { ADMIN_TOKEN, companyWithCallback, harness, Partner, TestApp, until } from './support/harness.js';
import { runIdentity } from './support/run-identity.js';

// Restarts and outages of the delivery core's parts under a steady flow of committed changes:
// a worker stopped (SIGTERM) or killed (SIGKILL), PostgreSQL cut away, the admission leader
// killed, Redis flushed. Each time: every committed callback reaches the receiver and ends
// `delivered`, none `failed`; duplicates only where at-least-once allows them.

/** Short, so that the whole schedule (18.5 s) and a lease (timeout + 30 s = 33 s) fit in a test. */
const SCHEDULE = '500ms,1s,2s,5s,10s';
const TIMEOUT_MS = '3000';
/** Deliveries in flight per worker process: the bound on duplicates after a kill. */
const CONCURRENCY = 8;
const delivery = { CALLBACK_RETRY_SCHEDULE: SCHEDULE, CALLBACK_TIMEOUT_MS: TIMEOUT_MS };
/** The admission lock (relay.repository.ts ADMISSION_LOCK). */
const ADMISSION_LOCK = 727_003;

type Service = ChildProcess & { output: string[] };

/**
 * The admission leader: the process whose relay connection holds the advisory lock. pg_locks
 * gives the backend, pg_stat_activity that backend's application_name, and each API process sets
 * its own through PGAPPNAME (node-postgres reads it), so the name says which child leads.
 */
async function admissionLeader(t: TestApp): Promise<string | null> {
  const rows = await t.sql<{ name: string }>(
    `SELECT a.application_name AS name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.classid = 0 AND l.objid = $1 AND l.objsubid = 1 AND l.granted
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    [ADMISSION_LOCK],
  );
  if (rows.length > 1) throw new Error(`two leaders: ${rows.map((r) => r.name).join(', ')}`);
  return rows[0]?.name ?? null;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const secondsSince = (t0: number) => `${((Date.now() - t0) / 1000).toFixed(1)} s`;

// The child processes run dist/ (built only when stale; the PostgreSQL test runs in this process).
beforeAll(() => buildService(), 180_000);

interface Change {
  /** The callback's id, which is also its webhook-id. */
  id: string;
  /** When the API answered (after its commit), this process's clock. */
  at: number;
}

/**
 * Commits changes one after the other at about `rate` a second, until stopped or `max` tries;
 * `next` returns the committed change, or null when the API did not accept it.
 */
function startFlow(next: () => Promise<Change | null>, { rate, max }: { rate: number; max: number }) {
  const changes: Change[] = [];
  const errors: string[] = [];
  let tries = 0;
  let stopped = false;
  const interval = 1000 / rate;
  const done = (async () => {
    while (!stopped && tries < max) {
      const started = Date.now();
      tries++;
      try {
        const c = await next();
        if (c) changes.push(c);
      } catch (e) {
        errors.push((e as Error).message);
      }
      // Pacing only (no correctness rests on it).
      const rest = interval - (Date.now() - started);
      if (rest > 0) await sleep(rest);
    }
  })();
  return {
    changes,
    errors,
    get tries() {
      return tries;
    },
    done,
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

/** Round-robin over a few companies, each change through the API in this process. */
async function companyFlow(t: TestApp, p: Partner, url: string, companies = 3) {
  const cs: Awaited<ReturnType<typeof companyWithCallback>>[] = [];
  for (let i = 0; i < companies; i++) cs.push(await companyWithCallback(t, p, url));
  let i = 0;
  return async (): Promise<Change> => {
    const id = await cs[i++ % cs.length].change();
    return { id, at: Date.now() };
  };
}

/** The receiver answers 204 after `delayMs`, so deliveries are in flight when a fault comes; counts those in flight. */
function answerAfter(rx: Receiver, delayMs: number): { open: () => number } {
  let open = 0;
  rx.answer = (_h, _req, res) => {
    open++;
    setTimeout(() => {
      open--;
      res.writeHead(204).end();
    }, delayMs);
  };
  return { open: () => open };
}

function hitsById(rx: Receiver, path: string): Map<string, Received[]> {
  const byId = new Map<string, Received[]>();
  for (const h of rx.on(path)) {
    const id = String(h.headers['webhook-id']);
    byId.set(id, [...(byId.get(id) ?? []), h]);
  }
  return byId;
}

async function statusSummary(t: TestApp): Promise<string> {
  const rows = await t.sql<{ status: string; n: number; min: number; max: number; err: string | null }>(
    `SELECT status, count(*)::int AS n, min(attempt_count) AS min, max(attempt_count) AS max, max(last_error) AS err FROM callbacks GROUP BY status ORDER BY status`,
  );
  return rows
    .map((r) => `${r.status}: ${r.n} (attempts ${r.min}..${r.max}${r.err ? `, e.g. "${r.err}"` : ''})`)
    .join('; ');
}

/** Waits until every committed callback reached the receiver and every row is settled as delivered. */
async function waitAllDelivered(
  t: TestApp,
  rx: Receiver,
  path: string,
  committed: Change[],
  timeoutMs: number,
): Promise<void> {
  try {
    await until(
      () => {
        const byId = hitsById(rx, path);
        return committed.every((c) => byId.has(c.id));
      },
      { timeoutMs, intervalMs: 100, what: 'every committed callback at the receiver' },
    );
    // A request that reached the receiver before a kill leaves its row sending until the stalled
    // check or the lease brings it back: the rows get the same deadline as the arrivals.
    await until(
      async () =>
        (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM callbacks WHERE status <> 'delivered'`))[0].n === 0,
      {
        timeoutMs,
        intervalMs: 100,
        what: 'every callback row delivered',
      },
    );
  } catch (e) {
    const byId = hitsById(rx, path);
    const missing = committed.filter((c) => !byId.has(c.id)).map((c) => c.id);
    const detail = missing.length
      ? await t.sql(
          `SELECT id, status, attempt_count, lease_until, next_attempt_at, last_error FROM callbacks WHERE id = ANY($1::uuid[]) LIMIT 5`,
          [missing],
        )
      : [];
    throw new Error(
      `${(e as Error).message}; ${missing.length} not received, e.g. ${JSON.stringify(detail)}; rows: ${await statusSummary(t)}`,
      { cause: e },
    );
  }
}

/**
 * What every test asserts at the end: every committed callback is a row, delivered; every row
 * (committed through the API or not: a commit whose answer was lost) delivered, none failed;
 * the receiver saw each row's webhook-id with the row's body, signed, and no other id; at most
 * `maxExtra` requests beyond one per callback. Returns the callbacks received more than once.
 */
async function expectEveryCallbackDelivered(
  t: TestApp,
  p: Partner,
  rx: Receiver,
  path: string,
  committed: Change[],
  maxExtra: number,
) {
  const rows = await t.sql<{
    id: string;
    status: string;
    attempt_count: number;
    body: string;
    last_error: string | null;
  }>(`SELECT id, status, attempt_count, body, last_error FROM callbacks`);
  const byRow = new Map(rows.map((r) => [r.id, r]));
  expect(committed.filter((c) => !byRow.has(c.id))).toEqual([]);
  expect(rows.filter((r) => r.status !== 'delivered')).toEqual([]);
  expect(rows.filter((r) => r.status === 'failed' && r.attempt_count === 0)).toEqual([]);
  const byId = hitsById(rx, path);
  expect(rows.filter((r) => !byId.has(r.id)).map((r) => r.id)).toEqual([]);
  expect([...byId.keys()].filter((id) => !byRow.has(id))).toEqual([]);
  const hook = new Webhook(p.signingSecret);
  const duplicates: [string, Received[]][] = [];
  for (const [id, hits] of byId) {
    // Each request of a callback, first or repeated: its own body, under its own webhook-id, signed.
    for (const h of hits) {
      expect(h.body).toBe(byRow.get(id)!.body);
      expect(() => hook.verify(h.body, webhookHeaders(h.headers))).not.toThrow();
    }
    if (hits.length > 1) duplicates.push([id, hits]);
  }
  const extra = duplicates.reduce((n, [, hits]) => n + hits.length - 1, 0);
  expect(extra).toBeLessThanOrEqual(maxExtra);
  return { rows: rows.length, duplicates, extra };
}

/** The API in this process (ROLE=api) and deliveries in child worker processes, set up and torn down with the describe. */
function apiWithWorkers() {
  const children: Service[] = [];
  // The workers stop before the app closes (hooks run in the order declared).
  afterAll(async () => {
    for (const c of children) await stop(c, 'SIGKILL');
  });
  const e2e = harness({ ROLE: 'api', ...delivery });
  return {
    ctx: () => ({ t: e2e.t, p: e2e.p, rx: e2e.rx }),
    worker: async () => {
      const w = await startService({ ...workerEnv(e2e.t), ...delivery, CALLBACK_CONCURRENCY: String(CONCURRENCY) });
      children.push(w);
      return w;
    },
  };
}

describe('a worker stopped with SIGTERM under flow', () => {
  const { worker, ctx } = apiWithWorkers();
  let t: TestApp, p: Partner, rx: Receiver;
  beforeAll(() => ({ t, p, rx } = ctx()));

  it('drains: the in-flight deliveries settle, the next worker takes the rest; each webhook-id exactly once', async () => {
    const t0 = Date.now();
    const rxState = answerAfter(rx, 150);
    const first = await worker();
    const flow = startFlow(await companyFlow(t, p, rx.url('/term')), { rate: 30, max: 150 });
    try {
      await until(() => flow.changes.length >= 40 && rxState.open() >= 2, {
        timeoutMs: 20_000,
        what: 'deliveries in flight under flow',
      });
      const inFlight = rxState.open();
      const termAt = Date.now();
      expect(await stop(first, 'SIGTERM')).toBe(0);
      const drainedMs = Date.now() - termAt;
      // The flow goes on committing while no worker runs; a new one takes what waits.
      const second = await worker();
      const readyAt = Date.now();
      await flow.done;
      expect(flow.errors).toEqual([]);
      // No callback needs its lease to lapse after a graceful stop: well within the 33 s lease.
      await waitAllDelivered(t, rx, '/term', flow.changes, 10_000);
      const deliveredAfterMs = Date.now() - readyAt;
      const { rows, extra } = await expectEveryCallbackDelivered(t, p, rx, '/term', flow.changes, 0);
      expect(extra).toBe(0);
      expect(second.output.join('')).not.toMatch(/\bERROR\b|"level":"(error|fatal)"/);
      console.log(
        `SIGTERM: ${flow.changes.length} committed (${rows} rows), ${inFlight} in flight at SIGTERM, drained and exited 0 in ${drainedMs} ms, ` +
          `all delivered ${deliveredAfterMs} ms after the next worker was ready, 0 duplicates; test took ${secondsSince(t0)}`,
      );
    } finally {
      await flow.stop();
    }
  }, 90_000);
});

describe('a worker killed with SIGKILL under flow', () => {
  const { worker, ctx } = apiWithWorkers();
  let t: TestApp, p: Partner, rx: Receiver;
  beforeAll(() => ({ t, p, rx } = ctx()));

  it('the next worker delivers everything; only deliveries in flight at the kill repeat, same webhook-id and body', async () => {
    const t0 = Date.now();
    const rxState = answerAfter(rx, 150);
    const first = await worker();
    const flow = startFlow(await companyFlow(t, p, rx.url('/kill')), { rate: 30, max: 150 });
    try {
      await until(() => flow.changes.length >= 40 && rxState.open() >= 2, {
        timeoutMs: 20_000,
        what: 'deliveries in flight under flow',
      });
      const inFlight = rxState.open();
      const killAt = Date.now();
      await stop(first, 'SIGKILL');
      // Nothing can settle these any more: the deliveries in flight at the kill are among them.
      const leases = new Map(
        (
          await t.sql<{ id: string; lease: number }>(
            `SELECT id, (extract(epoch FROM lease_until) * 1000)::float8 AS lease FROM callbacks WHERE status = 'sending'`,
          )
        ).map((r) => [r.id, r.lease]),
      );
      const sendingAtKill = new Set(leases.keys());
      // Before this, only the killed worker could send: the receiver timestamps a request when it
      // has read it, which may be a moment after the kill for one the killed worker sent.
      const nextWorkerAt = Date.now();
      await worker();
      await flow.done;
      expect(flow.errors).toEqual([]);
      // Those in flight come back through BullMQ's stalled check (~15 s) or their lease (33 s).
      await waitAllDelivered(t, rx, '/kill', flow.changes, 60_000);
      const { rows, duplicates, extra } = await expectEveryCallbackDelivered(
        t,
        p,
        rx,
        '/kill',
        flow.changes,
        CONCURRENCY,
      );
      // A repeat is a request that reached the receiver before the kill and again after it.
      for (const [, hits] of duplicates) {
        expect(hits.length).toBe(2);
        expect(hits[0].at).toBeLessThanOrEqual(nextWorkerAt);
        expect(hits[1].at).toBeGreaterThan(killAt);
      }
      expect(duplicates.map(([id]) => id).filter((id) => !sendingAtKill.has(id))).toEqual([]);
      // Their jobs came back through the stalled check with enough lease left to be sent: none
      // waited for its lease to lapse.
      const byId = hitsById(rx, '/kill');
      const late = [...leases].filter(([id, lease]) => byId.get(id)!.at(-1)!.at >= lease);
      expect(late).toEqual([]);
      console.log(
        `SIGKILL: ${flow.changes.length} committed (${rows} rows), ${inFlight} requests in flight at the kill, ${sendingAtKill.size} rows sending just after, ` +
          `${duplicates.length} callbacks received twice (${extra} extra requests), all delivered ${Date.now() - killAt} ms after the kill; test took ${secondsSince(t0)}`,
      );
    } finally {
      await flow.stop();
    }
  }, 120_000);
});

describe('PostgreSQL cut away under flow (ROLE=all through a proxy)', () => {
  let proxy: TcpProxy;
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;
  /** A connection of the test's own, straight to PostgreSQL. */
  let direct: Client;

  let proxied: string;

  beforeAll(async () => {
    const url = new URL(runIdentity().databaseUrl);
    direct = new Client({ connectionString: url.toString() });
    proxy = await TcpProxy.start(Number(url.port || 5432), url.hostname);
    url.port = String(proxy.port);
    proxied = url.toString();
  });
  // The proxy lets the app's connections through again before it closes, and goes after it.
  afterAll(async () => {
    proxy?.restore();
    await direct?.end().catch(() => undefined);
  });
  const e2e = harness(() => ({
    ROLE: 'all',
    DATABASE_URL: proxied,
    ...delivery,
    CALLBACK_CONCURRENCY: String(CONCURRENCY),
  }));
  beforeAll(async () => {
    ({ t, p, rx } = e2e);
    await direct.connect();
  });
  afterAll(() => proxy?.close());

  it('every change the API accepted is delivered; what it refused during the cut is not counted', async () => {
    const t0 = Date.now();
    const rxState = answerAfter(rx, 100);
    const companies: string[] = [];
    for (let i = 0; i < 3; i++) {
      companies.push(
        (await t.as(p.apiKey, 'post', '/v1/companies', { name: 'F', status_callback: rx.url('/pg') }).expect(201)).body
          .id as string,
      );
    }
    const statuses = new Map<string, number>();
    let i = 0;
    // Unchecked against the contract: during the cut any answer (or none) just means "not accepted".
    const flow = startFlow(
      async () => {
        const k = i++;
        const c = companies[k % companies.length];
        const res = await request(t.app.getHttpServer())
          .patch(`/admin/v1/companies/${c}/credit`)
          .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
          .send({ repaymentTermDays: k + 1 })
          .timeout(10_000)
          .then(
            (r) => (r.status === 503 ? `503 Retry-After ${r.headers['retry-after']}` : String(r.status)),
            (e: Error) => `error ${e.message}`,
          );
        statuses.set(res, (statuses.get(res) ?? 0) + 1);
        if (!/^2/.test(res)) return null;
        // Changes of one company are sequential here: its newest callback is this change's.
        const [row] = await t.sql<{ id: string }>(
          'SELECT id FROM callbacks WHERE company_id = $1 ORDER BY seq DESC LIMIT 1',
          [c],
        );
        return { id: row.id, at: Date.now() };
      },
      { rate: 30, max: 260 },
    );
    try {
      await until(() => flow.changes.length >= 40 && rxState.open() >= 1, {
        timeoutMs: 20_000,
        what: 'deliveries under flow',
      });
      // The cut comes while settlements are being written: the test holds the destination's row
      // lock (as a slow writer elsewhere would), so the worker's next settlement waits on it in
      // PostgreSQL. Under real load a PostgreSQL restart always finds some settlement under way.
      await direct.query('BEGIN');
      await direct.query(`SELECT 1 FROM destinations WHERE origin = $1 FOR UPDATE`, [new URL(rx.url('/')).origin]);
      await until(
        async () =>
          (
            await t.sql(
              // Blocked by this connection, which holds only that row's lock (a statement's text in
              // pg_stat_activity is cut at track_activity_query_size: it may not name the table).
              `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND pid <> $1 AND $1 = ANY (pg_blocking_pids(pid))`,
              [(await direct.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid],
            )
          ).length > 0,
        { timeoutMs: 10_000, what: "a settlement waiting on its destination's row" },
      );
      const before = flow.changes.length;
      const triesBefore = flow.tries;
      proxy.cut();
      await direct.query('ROLLBACK');
      // The outage's length is the fault itself, not a wait for anything.
      await sleep(4000);
      proxy.restore();
      const restoredAt = Date.now();
      const triesDuring = flow.tries - triesBefore;
      const acceptedDuring = flow.changes.length - before;
      await flow.done;
      expect(flow.errors).toEqual([]);
      // The cut was felt: the API refused changes while it lasted, and accepted them again after.
      expect(flow.tries - flow.changes.length).toBeGreaterThan(0);
      // Refused as unavailable, to be retried: never as an internal error.
      expect([...statuses.keys()].filter((s) => /^5/.test(s) && s !== '503 Retry-After 2')).toEqual([]);
      expect(statuses.get('503 Retry-After 2')).toBeGreaterThan(0);
      expect(flow.changes.filter((c) => c.at > restoredAt).length).toBeGreaterThan(0);
      // Rows claimed while PostgreSQL was gone (a job whose row could not be loaded) wait for their lease (33 s).
      await waitAllDelivered(t, rx, '/pg', flow.changes, 60_000);
      const { rows, duplicates, extra } = await expectEveryCallbackDelivered(
        t,
        p,
        rx,
        '/pg',
        flow.changes,
        CONCURRENCY,
      );
      console.log(
        `PostgreSQL cut 4 s: ${flow.tries} changes tried, ${flow.changes.length} accepted (${acceptedDuring} of ${triesDuring} during the cut), ` +
          `answers ${JSON.stringify(Object.fromEntries(statuses))}, ${rows} rows all delivered, ${duplicates.length} received twice (${extra} extra), ` +
          `${proxy.refused} connections refused at the proxy; test took ${secondsSince(t0)}`,
      );
    } finally {
      proxy.restore();
      await direct.query('ROLLBACK').catch(() => undefined);
      await flow.stop();
    }
  }, 120_000);
});

describe('the admission leader killed under flow', () => {
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;
  const children: Service[] = [];
  const apis = new Map<string, Service>();

  const leader = () => admissionLeader(t);
  const api = async (name: string) => {
    const s = await startService({ ...workerEnv(t), ROLE: 'api', PGAPPNAME: name, ...delivery });
    children.push(s);
    apis.set(name, s);
    return s;
  };

  // The children stop before the app closes (hooks run in the order declared).
  afterAll(async () => {
    for (const c of children) await stop(c, 'SIGKILL');
  });
  // The API in this process commits the flow but never leads admission (its relay is left out),
  // so the leader is always one of the ROLE=api children, which the test can kill.
  const e2e = harness(
    { ROLE: 'api', ...delivery },
    { configure: (b) => b.overrideProvider(CallbackRelay).useValue({}) },
  );
  beforeAll(() => ({ t, p, rx } = e2e));

  it('a standby takes over within seconds, twice; callbacks committed after each takeover arrive within seconds; nothing lost', async () => {
    const t0 = Date.now();
    answerAfter(rx, 20);
    const w = await startService({ ...workerEnv(t), ...delivery, CALLBACK_CONCURRENCY: String(CONCURRENCY) });
    children.push(w);
    await Promise.all([api('relay-a'), api('relay-b')]);
    const firstLeader = await until(leader, { timeoutMs: 10_000, what: 'an admission leader' });
    const flow = startFlow(await companyFlow(t, p, rx.url('/leader')), { rate: 30, max: 600 });
    const takeovers: { killed: string; killAt: number; next: string; at: number }[] = [];
    /** Kills the leader; waits for the standby `next` to lead; returns when that happened. */
    const killLeader = async (next: string) => {
      const killed = (await leader())!;
      expect(killed).not.toBe(next);
      const killAt = Date.now();
      await stop(apis.get(killed)!, 'SIGKILL');
      await until(async () => (await leader()) === next, {
        timeoutMs: 10_000,
        intervalMs: 50,
        what: `${next} leading after ${killed} was killed`,
      });
      takeovers.push({ killed, killAt, next, at: Date.now() });
    };
    try {
      await until(() => flow.changes.length >= 30 && rx.on('/leader').length >= 10, {
        timeoutMs: 20_000,
        what: 'deliveries under flow',
      });
      await killLeader(firstLeader === 'relay-a' ? 'relay-b' : 'relay-a');
      // A fresh process joins as standby, then the one that took over is killed in turn.
      await api('relay-c');
      const n1 = flow.changes.length;
      await until(() => flow.changes.length >= n1 + 30, { timeoutMs: 20_000, what: 'flow after the first takeover' });
      await killLeader('relay-c');
      const n2 = flow.changes.length;
      await until(() => flow.changes.length >= n2 + 45, { timeoutMs: 20_000, what: 'flow after the second takeover' });
      await flow.stop();
      expect(flow.errors).toEqual([]);
      // A dead leader's admitted rows whose jobs it had not yet handed to Redis wait for their lease (33 s).
      await waitAllDelivered(t, rx, '/leader', flow.changes, 60_000);
      const { rows, extra } = await expectEveryCallbackDelivered(t, p, rx, '/leader', flow.changes, 0);
      expect(extra).toBe(0);
      // Each takeover within a few seconds of the kill (the standby tries each second).
      for (const k of takeovers) expect(k.at - k.killAt).toBeLessThan(3000);
      // Callbacks committed after a takeover (and, for the first, a second before the next kill:
      // the dead leader's last pass) arrive within seconds: admission goes on under the new leader.
      const byId = hitsById(rx, '/leader');
      const latency = (c: Change) => byId.get(c.id)![0].at - c.at;
      const windows = [
        [takeovers[0].at, takeovers[1].killAt - 1500],
        [takeovers[1].at, Infinity],
      ];
      const lat = windows.map(([from, to]) => flow.changes.filter((c) => c.at > from && c.at < to).map(latency));
      for (const l of lat) {
        expect(l.length).toBeGreaterThan(10);
        expect(Math.max(...l)).toBeLessThan(3000);
      }
      console.log(
        `leader killed twice: ${takeovers.map((k) => `${k.killed} killed, ${k.next} led ${k.at - k.killAt} ms later`).join('; ')}; ` +
          `${flow.changes.length} committed (${rows} rows) all delivered once; after each takeover max latency ${lat.map((l) => Math.max(...l)).join(' / ')} ms ` +
          `over ${lat.map((l) => l.length).join(' / ')} callbacks; test took ${secondsSince(t0)}`,
      );
    } finally {
      await flow.stop();
    }
  }, 120_000);
});

describe("the admission leader's PostgreSQL connection gone silent", () => {
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;
  let proxy: TcpProxy;
  const children: Service[] = [];

  // The proxy and the children go before the app closes (hooks run in the order declared).
  afterAll(async () => {
    proxy?.restore();
    for (const c of children) await stop(c, 'SIGKILL');
    await proxy?.close();
  });
  // As above: the API in this process commits, and never leads admission.
  const e2e = harness(
    { ROLE: 'api', ...delivery },
    { configure: (b) => b.overrideProvider(CallbackRelay).useValue({}) },
  );
  beforeAll(async () => {
    ({ t, p, rx } = e2e);
    const url = new URL(t.config.databaseUrl);
    proxy = await TcpProxy.start(Number(url.port || 5432), url.hostname);
  });

  it('the leader gives up its connection once a statement goes unanswered, and a standby leads and admits', async () => {
    const t0 = Date.now();
    const api = async (name: string, databaseUrl: string) => {
      const s = await startService({
        ...workerEnv(t),
        ROLE: 'api',
        PGAPPNAME: name,
        DATABASE_URL: databaseUrl,
        ...delivery,
      });
      children.push(s);
    };
    children.push(await startService({ ...workerEnv(t), ...delivery }));
    const throughProxy = new URL(t.config.databaseUrl);
    throughProxy.port = String(proxy.port);
    await api('relay-a', throughProxy.toString());
    await until(async () => (await admissionLeader(t)) === 'relay-a', { timeoutMs: 10_000, what: 'relay-a leading' });
    await api('relay-b', t.config.databaseUrl);
    const { change, statuses } = await companyWithCallback(t, p, rx.url('/silent'));
    await change();
    await until(async () => (await statuses()).join() === 'delivered', {
      timeoutMs: 10_000,
      what: 'delivered under relay-a',
    });

    // No byte reaches relay-a's connections any more, and no reset either: its statements hang.
    proxy.silence();
    const silentAt = Date.now();
    await change();
    await until(async () => (await admissionLeader(t)) === 'relay-b', {
      timeoutMs: RELAY_TIMEOUT_MS + 10_000,
      intervalMs: 100,
      what: 'relay-b leading',
    });
    const takeover = Date.now() - silentAt;
    await until(async () => (await statuses()).join() === 'delivered,delivered', {
      timeoutMs: 5000,
      what: 'the change after the silence delivered under relay-b',
    });
    // Within the statement timeout, the second's tick before it, and the standby's next try.
    expect(takeover).toBeLessThan(RELAY_TIMEOUT_MS + 3000);

    // Back on the network, relay-a connects again and stands by.
    proxy.restore();
    await until(
      async () =>
        (
          await t.sql(
            `SELECT 1 FROM pg_stat_activity WHERE application_name = 'relay-a' AND backend_start > to_timestamp($1 / 1000.0) AND query ILIKE '%pg_try_advisory_lock%'`,
            [silentAt],
          )
        ).length > 0,
      { timeoutMs: RELAY_TIMEOUT_MS + 5000, what: 'relay-a trying the lock again on a new connection' },
    );
    expect(await admissionLeader(t)).toBe('relay-b');
    console.log(
      `relay connection silenced: relay-b led ${takeover} ms later; relay-a back as a standby; test took ${secondsSince(t0)}`,
    );
  }, 120_000);
});

describe('Redis flushed while callbacks are sending', () => {
  let redis: ChildProcess | undefined;
  let redisPort: number;
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;
  const children: Service[] = [];

  beforeAll(async () => {
    redisPort = await sparePort();
    redis = await startRedis(redisPort);
  });
  // The children stop before the app closes; this suite's Redis after it (hooks run in the order declared).
  afterAll(async () => {
    for (const c of children) await stop(c, 'SIGKILL');
  });
  const e2e = harness(() => ({ ROLE: 'api', REDIS_URL: `redis://127.0.0.1:${redisPort}`, ...delivery }));
  beforeAll(() => ({ t, p, rx } = e2e));
  afterAll(async () => {
    if (redis) await stop(redis, 'SIGKILL');
  });

  it('callbacks whose jobs vanished come back when their lease lapses and are delivered; the others go on', async () => {
    const t0 = Date.now();
    answerAfter(rx, 20);
    const w = await startService({ ...workerEnv(t), ...delivery, CALLBACK_CONCURRENCY: '16' });
    children.push(w);
    const queue = t.app.get(CallbackQueue).queue;
    const flow = startFlow(await companyFlow(t, p, rx.url('/flush')), { rate: 30, max: 300 });
    try {
      await until(() => flow.changes.length >= 40 && rx.on('/flush').length >= 20, {
        timeoutMs: 20_000,
        what: 'deliveries under flow',
      });
      // Pausing the queue holds the jobs of the next admitted callbacks in Redis, where the flush
      // will find them (with a healthy worker they would stay there only for milliseconds).
      await queue.pause();
      const stranded = await until(
        async () => {
          const held = new Set((await queue.getJobs(['wait', 'prioritized'])).flatMap((j) => j.data.callbackIds));
          const rows = await t.sql<{ id: string; lease: number }>(
            `SELECT id, (extract(epoch FROM lease_until) * 1000)::float8 AS lease FROM callbacks WHERE status = 'sending'`,
          );
          const s = rows.filter((r) => held.has(r.id));
          return s.length >= 3 ? s : null;
        },
        { timeoutMs: 10_000, what: 'admitted callbacks whose jobs wait in Redis' },
      );
      // The API shows an admitted callback as pending.
      const view = await t.as(p.apiKey, 'get', `/v1/callbacks/${stranded[0].id}`).expect(200);
      expect(view.body.status).toBe('pending');
      const flusher = new Redis(redisPort, '127.0.0.1');
      await flusher.flushall();
      flusher.disconnect();
      const flushAt = Date.now();
      await flow.done;
      expect(flow.errors).toEqual([]);
      await waitAllDelivered(t, rx, '/flush', flow.changes, 60_000);
      const { rows, extra } = await expectEveryCallbackDelivered(t, p, rx, '/flush', flow.changes, 0);
      expect(extra).toBe(0);
      const byId = hitsById(rx, '/flush');
      // The stranded ones arrived only once their lease had lapsed (the sweep gave them back).
      for (const s of stranded) expect(byId.get(s.id)![0].at).toBeGreaterThanOrEqual(s.lease);
      // Meanwhile the callbacks committed after the flush were delivered as usual.
      const firstLease = Math.min(...stranded.map((s) => s.lease));
      const after = flow.changes.filter((c) => c.at > flushAt);
      const before = after.filter((c) => byId.get(c.id)![0].at < firstLease);
      expect(before.length).toBeGreaterThan(0);
      console.log(
        `Redis flushed: ${stranded.length} callbacks sending with jobs in Redis, delivered ${stranded.map((s) => Math.round(byId.get(s.id)![0].at - s.lease)).join(', ')} ms after their leases; ` +
          `${before.length} of ${after.length} callbacks committed after the flush delivered before the first lease lapsed; ${flow.changes.length} committed (${rows} rows) all delivered once; test took ${secondsSince(t0)}`,
      );
    } finally {
      await flow.stop();
    }
  }, 120_000);
});
