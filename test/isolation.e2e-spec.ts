import { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { Webhook } from 'standardwebhooks';
import { destinationOf } from '../src/callbacks/callback-destination.js';
import { CallbackDelivery, DeliveryResult } from '../src/delivery/callback-delivery.js';
import { creditOf, DestinationGate } from '../src/delivery/destination-gate.js';
import type { DestinationView } from '../src/delivery/destinations.service.js';
import { buildService, startService, stop, workerEnv } from './support/processes.js';
import { Receiver, webhookHeaders } from './support/receiver.js';
import { companyWithCallback, createPartner, failureOnRecord, Partner, startTestApp, TestApp, until } from './support/test-app.js';

type Destination = DestinationView;

/** Leaves every request hanging (a receiver that accepts and never answers) until `release()`. */
function blackhole(rx: Receiver) {
  const hanging: http.ServerResponse[] = [];
  let answering = false;
  rx.answer = (_h, _req, res) => (answering ? res.writeHead(204).end() : hanging.push(res));
  return {
    recover: () => {
      answering = true;
    },
    release: () => hanging.splice(0).forEach((res) => res.destroy()),
  };
}

/** Answers 204 after `delayMs`, counting the requests open at once; `most()` is the highest count seen. */
function slowAnswers(rx: Receiver, delayMs: number) {
  let open = 0;
  let most = 0;
  rx.answer = (_h, _req, res) => {
    most = Math.max(most, ++open);
    setTimeout(() => {
      open--;
      res.writeHead(204).end();
    }, delayMs);
  };
  return { most: () => most };
}

const destinations = async (t: TestApp, query = '') => (await t.admin('get', `/admin/v1/destinations${query}`).expect(200)).body.items as Destination[];
const destination = async (t: TestApp, rx: Receiver) => (await destinations(t)).find((d) => d.origin === `http://127.0.0.1:${rx.port}`);
const metric = async (t: TestApp, line: string) => {
  const text = (await t.http().get('/metrics').expect(200)).text;
  const m = new RegExp(`^${line.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
};
const verified = (p: Partner, h: Receiver['hits'][number]) => new Webhook(p.signingSecret).verify(h.body, webhookHeaders(h.headers));

describe('a dead destination beside a healthy one', () => {
  let t: TestApp;
  let p: Partner;
  let dead: Receiver;
  let ok: Receiver;
  let hole: ReturnType<typeof blackhole>;

  beforeAll(async () => {
    [dead, ok] = await Promise.all([Receiver.start(), Receiver.start()]);
    hole = blackhole(dead);
    // 10 deliveries in flight per worker, at most 3 to one destination; 3 failures open a circuit.
    t = await startTestApp({
      CALLBACK_CONCURRENCY: '10',
      CALLBACK_DESTINATION_CONCURRENCY: '3',
      CALLBACK_BREAKER_THRESHOLD: '3',
      CALLBACK_BREAKER_PROBE: '500ms..1s',
      CALLBACK_TIMEOUT_MS: '3000',
      // Short first retries (a retry that comes due while the circuit is open waits with the rest).
      CALLBACK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1m',
    });
    p = await createPartner(t);
  });
  afterAll(async () => {
    hole?.release();
    await t?.close();
    await dead?.close();
    await ok?.close();
  });

  it('delivers the healthy destination while the dead one hangs, opens the dead circuit, then resumes it by itself', async () => {
    const deadCompany = await companyWithCallback(t, p, dead.url('/never'));
    for (let i = 0; i < 30; i++) await deadCompany.change();
    await until(() => dead.hits.length === 3, { what: 'the dead destination holding its 3 slots' });

    // The dead destination's three attempts hang for 3 s; the healthy one is not behind them.
    const okCompany = await companyWithCallback(t, p, ok.url('/fine'));
    const started = Date.now();
    for (let i = 0; i < 5; i++) await okCompany.change();
    await until(() => ok.hits.length === 5, { what: 'the healthy destination served', timeoutMs: 2500 });
    expect(Date.now() - started).toBeLessThan(2500);
    const [{ n: attemptsFinished }] = await t.sql<{ n: string }>(`SELECT count(*) AS n FROM callback_attempts a JOIN callbacks c ON c.id = a.callback_id WHERE c.company_id = $1`, [deadCompany.c]);
    expect(Number(attemptsFinished)).toBe(0);
    for (const h of ok.hits) expect(verified(p, h)).toBeTruthy();

    // The three time out together: the circuit opens, the other 27 wait without a job.
    const open = await until(async () => ((await destination(t, dead))?.state !== 'closed' ? destination(t, dead) : null), { what: 'circuit open' });
    expect(open.consecutiveFailures).toBeGreaterThanOrEqual(3);
    expect(open.lastError).toBe('timeout: no answer within 3000 ms');
    expect(open.openedAt).not.toBeNull();
    expect(await metric(t, 'funding_destination_circuit_transitions_total{transition="opened"}')).toBe(1);
    // 27 never attempted; all parked (no job, no Redis memory) but the one that may be out as the first probe.
    const counts = () =>
      t.sql<{ untried: string; parked: string }>(
        `SELECT count(*) FILTER (WHERE attempt_count = 0) AS untried, count(*) FILTER (WHERE parked_at IS NOT NULL) AS parked FROM callbacks WHERE company_id = $1`,
        [deadCompany.c],
      );
    // The circuit opens in Redis while the three attempts are still being recorded in PostgreSQL.
    await until(async () => Number((await counts())[0].parked) >= 26 && Number((await counts())[0].untried) <= 27, { what: 'the rest parked, the three hung attempts recorded' });
    expect(Number((await counts())[0].untried)).toBe(27);
    expect((await destinations(t, '?state=closed')).map((d) => d.origin)).toContain(`http://127.0.0.1:${ok.port}`);
    // While open: one probe at a time, each timing out again.
    await until(async () => ((await destination(t, dead))?.consecutiveFailures ?? 0) >= 4, { what: 'a failed probe', timeoutMs: 8000 });
    // At most: its 3 slots, the slots freed by the first two timeouts before the third opened
    // the circuit (when they settle apart), and the one probe.
    expect(dead.hits.length).toBeLessThanOrEqual(3 + 2 + 1);

    // The receiver comes back: the next probe closes the circuit and everything that waited goes.
    hole.recover();
    await until(async () => (await deadCompany.statuses()).every((s) => s === 'delivered'), { what: 'the backlog delivered', timeoutMs: 15000 });
    const d = await destination(t, dead);
    expect(d).toMatchObject({ state: 'closed', consecutiveFailures: 0, waiting: 0, openedAt: null, nextProbeAt: null });
    expect(await metric(t, 'funding_destination_circuit_transitions_total{transition="closed"}')).toBe(1);
    // Each callback with its own webhook-id; the three that hung were attempted again (same ids).
    const ids = (await t.sql<{ id: string }>(`SELECT id FROM callbacks WHERE company_id = $1`, [deadCompany.c])).map((r) => r.id);
    expect(new Set(dead.hits.map((h) => h.headers['webhook-id']))).toEqual(new Set(ids));
    // Probes that failed used none of their callback's schedule: at most the attempt that hung
    // before the circuit opened, and the one that delivered, count.
    const [{ most }] = await t.sql<{ most: number }>(`SELECT max(schedule_attempts) AS most FROM callbacks WHERE company_id = $1`, [deadCompany.c]);
    expect(most).toBeLessThanOrEqual(2);
    // Thirty deliveries, plus only the attempts that hung before the circuit opened and the probes that hung.
    expect(dead.hits.length).toBeLessThanOrEqual(30 + 5 + 2);
  }, 60_000);
});

describe('the breaker counts 5xx and 429, and probes at doubling intervals', () => {
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;

  beforeAll(async () => {
    rx = await Receiver.start();
    t = await startTestApp({ CALLBACK_BREAKER_THRESHOLD: '3', CALLBACK_BREAKER_PROBE: '300ms..600ms', CALLBACK_RETRY_SCHEDULE: '100ms,100ms,100ms,100ms,100ms,100ms,100ms,1m' });
    p = await createPartner(t);
  });
  afterAll(async () => {
    await t?.close();
    await rx?.close();
  });

  it.each([
    ['a 500', 500],
    ['a 429', 429],
  ])('opens after three answers of %s, then probes every 300 ms doubling to 600 ms, then closes on a 2xx', async (_name, code) => {
    let failing = true;
    rx.answer = (_h, _req, res) => res.writeHead(failing ? code : 200).end();
    const company = await companyWithCallback(t, p, rx.url(`/e${code}`));
    rx.hits.length = 0;
    const id = await company.change();
    const open = await until(async () => ((await destination(t, rx))?.state === 'open' ? destination(t, rx) : null), { what: 'circuit open' });
    expect(open.lastError).toBe(`HTTP ${code}`);
    // Three attempts opened it; probes follow 300 ms, then 600 ms, 600 ms… apart.
    await until(() => rx.hits.length >= 6, { what: 'three probes', timeoutMs: 8000 });
    const gaps = rx.hits.slice(2, 6).map((h, i, a) => (i ? h.at - a[i - 1].at : 0)).slice(1);
    expect(gaps[0]).toBeGreaterThanOrEqual(280);
    expect(gaps[1]).toBeGreaterThanOrEqual(580);
    expect(gaps[2]).toBeGreaterThanOrEqual(580);
    expect(new Set(rx.hits.map((h) => h.headers['webhook-id']))).toEqual(new Set([id]));
    failing = false;
    await until(async () => (await company.statuses()).every((s) => s === 'delivered'), { what: 'delivered by the probe' });
    expect((await destination(t, rx))?.state).toBe('closed');
  }, 30_000);

  it('does not count a 4xx other than 429 towards opening', async () => {
    rx.answer = (_h, _req, res) => res.writeHead(404).end();
    const company = await companyWithCallback(t, p, rx.url('/missing'));
    for (let i = 0; i < 3; i++) await company.change();
    await until(() => rx.on('/missing').length >= 6, { what: 'retries of 404s' });
    expect((await destination(t, rx))?.state).toBe('closed');
  });
});

describe('an operator probes an open destination now', () => {
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;

  beforeAll(async () => {
    rx = await Receiver.start();
    t = await startTestApp({ CALLBACK_BREAKER_THRESHOLD: '1', CALLBACK_BREAKER_PROBE: '10m..10m' });
    p = await createPartner(t);
  });
  afterAll(async () => {
    await t?.close();
    await rx?.close();
  });

  it('sends the probe within a second instead of in 10 minutes; 404 unknown, 409 closed', async () => {
    let up = false;
    rx.answer = (_h, _req, res) => res.writeHead(up ? 200 : 503).end();
    const company = await companyWithCallback(t, p, rx.url('/p'));
    await company.change();
    await until(async () => (await destination(t, rx))?.state === 'open', { what: 'circuit open' });
    await company.change();
    await until(async () => (await destination(t, rx))?.waiting === 2, { what: 'two waiting' });
    expect(await metric(t, 'funding_callbacks_waiting{reason="circuit_open"}')).toBe(2);
    expect(await metric(t, 'funding_destinations_open')).toBe(1);
    up = true;
    const origin = `http://127.0.0.1:${rx.port}`;
    await t.admin('post', '/admin/v1/destinations/probe', { origin }).expect(202);
    await until(async () => (await company.statuses()).every((s) => s === 'delivered'), { what: 'delivered after the probe' });
    await t.admin('post', '/admin/v1/destinations/probe', { origin }).expect(409);
    await t.admin('post', '/admin/v1/destinations/probe', { origin: 'https://unknown.example' }).expect(404);
    await t.admin('post', '/admin/v1/destinations/probe', {}).expect(400);
    await t.admin('get', '/admin/v1/destinations?state=broken').expect(400);

    // The partner sees its own destinations, counting only its own callbacks.
    const mine = (await t.as(p.apiKey, 'get', '/v1/callbacks/destinations').expect(200)).body.items as Destination[];
    expect(mine).toEqual([expect.objectContaining({ origin, state: 'closed', waiting: 0, inFlight: 0 })]);
    const other = await createPartner(t, 'Other Bank');
    expect((await t.as(other.apiKey, 'get', '/v1/callbacks/destinations').expect(200)).body).toEqual({ items: [] });
    expect((await destinations(t, `?partnerId=${other.id}`))).toEqual([]);
  });
});

describe('a callback that waits past the end of its schedule', () => {
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;

  beforeAll(async () => {
    rx = await Receiver.start();
    t = await startTestApp({ CALLBACK_BREAKER_THRESHOLD: '1', CALLBACK_BREAKER_PROBE: '10m..10m', CALLBACK_RETRY_SCHEDULE: '1s' });
    p = await createPartner(t);
  });
  afterAll(async () => {
    await t?.close();
    await rx?.close();
  });

  it('fails, naming the outage, with none of its attempts used', async () => {
    rx.answer = (_h, _req, res) => res.writeHead(502).end();
    const company = await companyWithCallback(t, p, rx.url('/gone'));
    await company.change();
    await until(async () => (await destination(t, rx))?.state === 'open', { what: 'circuit open' });
    const id = await company.change();
    const cb = await until(async () => {
      const c = (await t.admin('get', `/admin/v1/callbacks/${id}`).expect(200)).body;
      return c.status === 'failed' ? c : null;
    }, { what: 'failed after its schedule', timeoutMs: 8000 });
    expect(cb.attemptCount).toBe(0);
    expect(cb.lastError).toMatch(new RegExp(`^destination http://127.0.0.1:${rx.port} unavailable \\(circuit open since .*, last error: HTTP 502\\); attempt schedule ended while waiting$`));
    expect(rx.hits.filter((h) => h.headers['webhook-id'] === id)).toHaveLength(0);
    expect(await metric(t, 'funding_callbacks_expired_waiting_total')).toBeGreaterThanOrEqual(1);

    // Redelivered while the circuit is still open: it waits like the rest, with a fresh schedule.
    await t.admin('post', `/admin/v1/callbacks/${id}/redeliver`).expect(202);
    await until(async () => (await t.sql<{ parked: boolean }>(`SELECT parked_at IS NOT NULL AS parked FROM callbacks WHERE id = $1`, [id]))[0].parked, { what: 'redelivery parked' });
    const again = await until(async () => {
      const c = (await t.admin('get', `/admin/v1/callbacks/${id}`).expect(200)).body;
      return c.status === 'failed' ? c : null;
    }, { what: 'failed again after its fresh schedule', timeoutMs: 8000 });
    expect(again.attemptCount).toBe(0);
    expect(rx.hits.filter((h) => h.headers['webhook-id'] === id)).toHaveLength(0);
  });
});

describe('bytes a receiver answers never cost another callback its record', () => {
  let t: TestApp;
  let odd: Receiver;
  const healthy: Receiver[] = [];

  beforeAll(async () => {
    odd = await Receiver.start();
    for (let i = 0; i < 20; i++) healthy.push(await Receiver.start());
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
    await odd?.close();
    for (const r of healthy) await r.close();
  });

  it("derives a callback's destination in PostgreSQL exactly as destinationOf does", async () => {
    const urls = [
      'https://hooks.example.com/a/b?token=secret#x',
      'https://hooks.example.com:8443/a',
      'https://hooks.example.com:443/a',
      'http://127.0.0.1:8080/cb',
      'http://127.0.0.1:80/cb',
      'https://[2001:db8::1]:444/x?y',
      'https://h.example:4430',
    ].map((u) => new URL(u).href); // stored as registration stores them
    const rows = await t.sql<{ origin: string }>(`SELECT callback_origin(u) AS origin FROM unnest($1::text[]) WITH ORDINALITY AS x(u, n) ORDER BY n`, [urls]);
    expect(rows.map((r) => r.origin)).toEqual(urls.map(destinationOf));
  });

  it('records NUL and invalid UTF-8 as replacement characters; 20 healthy receivers of another partner get exactly one POST each', async () => {
    const a = await createPartner(t, 'A');
    const b = await createPartner(t, 'B');
    odd.answer = (_h, _req, res) => res.writeHead(200).end(Buffer.from([0x6f, 0x6b, 0x00, 0xff, 0xfe, 0x21]));
    const oddCompany = await companyWithCallback(t, a, odd.url('/odd'));
    const others = await Promise.all(healthy.map((r) => companyWithCallback(t, b, r.url('/h'))));
    const oddId = await oddCompany.change();
    for (const o of others) await o.change();
    await until(async () => {
      const rows = await t.sql<{ status: string }>(`SELECT status FROM callbacks`);
      return rows.length === 21 && rows.every((r) => r.status === 'delivered');
    }, { what: 'all delivered', timeoutMs: 15000 });
    const cb = (await t.admin('get', `/admin/v1/callbacks/${oddId}`).expect(200)).body;
    expect(cb.attempts).toHaveLength(1);
    expect(cb.attempts[0].responseBody).toBe('ok\ufffd\ufffd\ufffd!');
    // Delivered exactly once each: no record lost, so nothing was sent again.
    await until(async () => (await t.sql(`SELECT 1 FROM callback_attempts`)).length === 21, { what: 'every attempt recorded' });
    for (const r of healthy) expect(r.hits).toHaveLength(1);
    expect(odd.hits).toHaveLength(1);
    expect(await metric(t, 'funding_callback_record_failures_total{stage="lost"}')).toBe(0);
  });
});

describe('destination state shared by worker processes', () => {
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;
  const workers: ChildProcess[] = [];
  const worker = async (env: Record<string, string> = {}) => {
    const w = await startService({ ...workerEnv(t), ...shared, ...env });
    workers.push(w);
    return w;
  };
  const shared = { CALLBACK_DESTINATION_CONCURRENCY: '4', CALLBACK_BREAKER_THRESHOLD: '2', CALLBACK_BREAKER_PROBE: '1s..1s', CALLBACK_RETRY_SCHEDULE: '100ms,100ms,1m' };

  beforeAll(async () => {
    buildService();
    rx = await Receiver.start();
    t = await startTestApp({ ROLE: 'api', ...shared });
    p = await createPartner(t);
  }, 180_000);
  afterAll(async () => {
    for (const w of workers) await stop(w, 'SIGKILL');
    await t?.close();
    await rx?.close();
  });

  it('two workers together keep at most 4 requests open at one destination', async () => {
    const answers = slowAnswers(rx, 150);
    await Promise.all([worker(), worker()]);
    const company = await companyWithCallback(t, p, rx.url('/slow'));
    for (let i = 0; i < 40; i++) await company.change();
    await until(async () => (await company.statuses()).every((s) => s === 'delivered'), { what: '40 delivered', timeoutMs: 30000 });
    expect(answers.most()).toBe(4);
    expect(rx.on('/slow')).toHaveLength(40);
  }, 60_000);

  it('keeps an open circuit across a worker restart, then resumes', async () => {
    for (const w of workers.splice(0)) await stop(w, 'SIGTERM');
    let up = false;
    rx.answer = (_h, _req, res) => res.writeHead(up ? 204 : 500).end();
    await worker();
    const company = await companyWithCallback(t, p, rx.url('/restart'));
    await company.change();
    await until(async () => (await destination(t, rx))?.state === 'open', { what: 'circuit open' });
    for (const w of workers.splice(0)) expect(await stop(w, 'SIGTERM')).toBe(0);
    await company.change();
    await company.change();
    up = true;
    await worker();
    // The new worker honours the open circuit: nothing before a probe, then a probe closes it.
    await until(async () => (await company.statuses()).every((s) => s === 'delivered'), { what: 'delivered after the restart', timeoutMs: 15000 });
    expect(await stop(workers[0], 'SIGTERM')).toBe(0);
    const hits = rx.on('/restart');
    // Two 500s opened it; then the probe and the two that waited: 5 requests, 3 of them 2xx.
    expect(hits.length).toBe(5);
  }, 60_000);
});

describe("a destination's backlog and another destination's fresh callback", () => {
  let t: TestApp;
  let p: Partner;
  let rxX: Receiver;
  let rxY: Receiver;
  let w: ChildProcess | undefined;

  beforeAll(async () => {
    buildService();
    [rxX, rxY] = await Promise.all([Receiver.start(), Receiver.start()]);
    // No worker in this process: the queue is looked at before one starts.
    t = await startTestApp({ ROLE: 'api', CALLBACK_DESTINATION_CONCURRENCY: '3' });
    p = await createPartner(t);
  }, 180_000);
  afterAll(async () => {
    if (w) await stop(w, 'SIGKILL');
    await t?.close();
    await rxX?.close();
    await rxY?.close();
  });

  it("queues a healthy destination's backlog behind another destination's fresh callback, all but as many as it has slots", async () => {
    const x = await companyWithCallback(t, p, rxX.url('/x'));
    const y = await companyWithCallback(t, p, rxY.url('/y'));
    // X and Y answer 2xx once: a healthy destination's fresh callbacks are queued without a slot
    // (a destination not known healthy gets its slot from the relay, and its job goes first).
    const first = await x.change();
    await y.change();
    w = await startService({ ...workerEnv(t), CALLBACK_CONCURRENCY: '1', CALLBACK_DESTINATION_CONCURRENCY: '3' });
    await until(async () => [...(await x.statuses()), ...(await y.statuses())].every((s) => s === 'delivered'), { what: "X's and Y's first callbacks delivered" });
    await stop(w, 'SIGTERM');

    const backlog: string[] = [];
    for (let i = 0; i < 12; i++) backlog.push(await x.change());
    const queued = async (ids: string[]) =>
      Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM callbacks WHERE id = ANY($1::uuid[]) AND enqueued_at IS NOT NULL', [ids]))[0].n);
    await until(async () => (await queued(backlog)) === 12, { what: "X's 12 callbacks queued" });
    const fresh = await y.change();
    await until(async () => (await queued([fresh])) === 1, { what: "Y's callback queued" });

    // One delivery at a time, so the attempts follow the queue's order.
    w = await startService({ ...workerEnv(t), CALLBACK_CONCURRENCY: '1', CALLBACK_DESTINATION_CONCURRENCY: '3' });
    await until(async () => [...(await x.statuses()), ...(await y.statuses())].every((s) => s === 'delivered'), { what: 'all delivered', timeoutMs: 30_000 });
    const order = (
      await t.sql<{ callback_id: string }>('SELECT callback_id FROM callback_attempts WHERE callback_id = ANY($1::uuid[]) ORDER BY started_at', [[...backlog, fresh]])
    ).map((r) => r.callback_id);
    // X's first three, then Y's, then the rest of X's backlog (committed before Y's callback).
    expect(order).toEqual([...backlog.slice(0, 3), fresh, ...backlog.slice(3)]);
    expect(rxX.hits.map((h) => JSON.parse(h.body).companyId)).toEqual(Array(13).fill(x.c));
    expect(first).not.toBe(fresh);
    expect(rxY.hits).toHaveLength(2);
  }, 120_000);
});

describe("a worker's slots reused for a busy healthy destination (credits)", () => {
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;
  let elsewhere: DestinationGate;

  beforeAll(async () => {
    rx = await Receiver.start();
    t = await startTestApp({
      CALLBACK_CONCURRENCY: '6',
      CALLBACK_DESTINATION_CONCURRENCY: '3',
      CALLBACK_BREAKER_THRESHOLD: '3',
      CALLBACK_BREAKER_PROBE: '10m..10m',
      CALLBACK_RETRY_SCHEDULE: '1s,1m',
    });
    p = await createPartner(t);
    // Another worker process's view of the same destinations.
    elsewhere = new DestinationGate(t.config);
    await until(() => elsewhere.openCount().then(() => true, () => false), { what: "the gate's Redis connection" });
  });
  afterAll(async () => {
    elsewhere?.onModuleDestroy();
    await t?.close();
    await rx?.close();
  });

  it('counts them for their partner, gives them back when idle, and stops reusing them once another process opens the circuit', async () => {
    const origin = `http://127.0.0.1:${rx.port}`;
    const company = await companyWithCallback(t, p, rx.url('/busy'));
    const delivered = async () => (await company.statuses()).filter((s) => s === 'delivered').length;
    // Healthy (one 2xx), then held requests: the partner sees its three in flight, named as its credits.
    await company.change();
    await until(async () => (await delivered()) === 1, { what: 'first delivered' });
    const held: http.ServerResponse[] = [];
    rx.answer = (_h, _req, res) => held.push(res);
    for (let i = 0; i < 5; i++) await company.change();
    await until(() => held.length === 3, { what: 'three requests held' });
    const [state] = await elsewhere.snapshot([origin]);
    expect(state.leases.map(creditOf)).toEqual([p.id, p.id, p.id]);
    const mine = (await t.as(p.apiKey, 'get', '/v1/callbacks/destinations').expect(200)).body.items as Destination[];
    expect(mine).toEqual([expect.objectContaining({ origin, inFlight: 3 })]);
    rx.answer = (_h, _req, res) => setTimeout(() => res.writeHead(204).end(), 20);
    held.splice(0).forEach((res) => res.writeHead(204).end());
    await until(async () => (await delivered()) === 6, { what: 'six delivered' });
    // Idle, the credits go back to Redis within milliseconds.
    await until(async () => (await destination(t, rx))?.inFlight === 0, { what: 'credits given back', timeoutMs: 2000 });

    // Busy again; another process sees three failures answered after every 2xx this worker will
    // report: the worker's reports do not close the circuit, and it stops reusing its credits.
    for (let i = 0; i < 5; i++) await company.change();
    await until(async () => (await delivered()) >= 8, { what: 'busy again' });
    const later = Date.now() + 60_000;
    await elsewhere.settle([1, 2, 3].map(() => ({ origin, id: randomUUID(), result: 'fail' as const, error: 'HTTP 503', at: later })));
    // One callback at a time, each finding an idle credit: only hearing of the open circuit stops
    // the reuse (its reports, every 250 ms, hear it).
    await until(
      async () => {
        const id = await company.change();
        const row = await until(
          async () => (await t.sql<{ status: string; parked_at: Date | null }>('SELECT status, parked_at FROM callbacks WHERE id = $1', [id])).find((r) => r.status !== 'pending' || r.parked_at),
          { what: 'delivered or parked' },
        );
        return row.parked_at !== null;
      },
      { what: 'a callback parked behind the circuit opened elsewhere', timeoutMs: 5000 },
    );
    await until(async () => (await company.statuses()).every((s) => s === 'delivered') || ((await destination(t, rx))?.inFlight === 0 && (await destination(t, rx))?.state === 'open'), {
      what: 'nothing in flight',
    });
    expect((await destination(t, rx))?.state).toBe('open');
    const sent = rx.hits.length;
    // The operator's probe closes it; everything that waited goes, each callback exactly once.
    await t.admin('post', '/admin/v1/destinations/probe', { origin }).expect(202);
    await until(async () => (await company.statuses()).every((s) => s === 'delivered'), { what: 'all delivered after the probe' });
    const ids = new Set(rx.on('/busy').map((h) => h.headers['webhook-id']));
    expect(ids.size).toBe((await company.statuses()).length);
    expect(rx.hits.length).toBeGreaterThan(sent);
    for (const h of rx.hits) expect(verified(p, h)).toBeTruthy();
  }, 60_000);
});

describe("a burst before the destination's first 2xx: a new destination trusted, one with a failure on record parked", () => {
  let t: TestApp;
  let p: Partner;
  let fresh: Receiver;
  let failing: Receiver;
  let w: ChildProcess | undefined;

  beforeAll(async () => {
    buildService();
    [fresh, failing] = await Promise.all([Receiver.start(), Receiver.start()]);
    // No worker in this process: the relay queues or parks the bursts before anything is delivered.
    t = await startTestApp({ ROLE: 'api', CALLBACK_DESTINATION_CONCURRENCY: '3' });
    p = await createPartner(t);
  }, 180_000);
  afterAll(async () => {
    if (w) await stop(w, 'SIGKILL');
    await t?.close();
    await fresh?.close();
    await failing?.close();
  });

  it('queues the new one without slots, parks the other but three, then delivers each callback once, never more than the cap at a time', async () => {
    const answers = [slowAnswers(fresh, 5), slowAnswers(failing, 5)];
    await failureOnRecord(t, failing.url('/'));
    const companies = [await companyWithCallback(t, p, fresh.url('/burst')), await companyWithCallback(t, p, failing.url('/burst'))];
    for (let i = 0; i < 60; i++) for (const company of companies) await company.change();
    const counts = async (company: (typeof companies)[number]) =>
      (
        await t.sql<{ parked: string; queued: string }>(
          `SELECT count(*) FILTER (WHERE parked_at IS NOT NULL) AS parked, count(*) FILTER (WHERE enqueued_at IS NOT NULL) AS queued FROM callbacks WHERE company_id = $1`,
          [company.c],
        )
      ).map((r) => ({ parked: Number(r.parked), queued: Number(r.queued) }))[0];
    // Never met: its fresh callbacks go to the queue without slots (each takes one as it starts).
    await until(async () => (await counts(companies[0])).queued === 60, { what: "the new destination's burst queued" });
    expect(await counts(companies[0])).toEqual({ parked: 0, queued: 60 });
    // A failure on record: three go with the destination's slots, the rest wait in PostgreSQL.
    await until(async () => (await counts(companies[1])).parked === 57 && (await counts(companies[1])).queued === 3, { what: 'the burst parked but three' });

    // The first 2xx makes each healthy: parked ones go back to the queue without slots, at most
    // the cap of them at a time, and take their slots (or the worker's credits) as they start.
    w = await startService({ ...workerEnv(t), CALLBACK_CONCURRENCY: '8', CALLBACK_DESTINATION_CONCURRENCY: '3' });
    for (const [i, rx] of [fresh, failing].entries()) {
      const company = companies[i];
      await until(async () => (await company.statuses()).every((s) => s === 'delivered'), { what: `all 60 delivered to ${rx.url('/')}`, timeoutMs: 30_000 });
      const ids = (await t.sql<{ id: string }>('SELECT id FROM callbacks WHERE company_id = $1', [company.c])).map((r) => r.id);
      expect(rx.hits.map((h) => h.headers['webhook-id']).sort()).toEqual([...ids].sort());
      for (const h of rx.hits) expect(verified(p, h)).toBeTruthy();
      expect(answers[i].most()).toBeLessThanOrEqual(3);
      expect(await counts(company)).toEqual({ parked: 0, queued: 60 });
      await until(async () => (await destination(t, rx))?.waiting === 0, { what: 'nothing counted waiting' });
      expect(await destination(t, rx)).toMatchObject({ state: 'closed', consecutiveFailures: 0 });
    }
  }, 120_000);
});

describe('a worker at a new destination whose slots hang', () => {
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;

  beforeAll(async () => {
    rx = await Receiver.start();
    t = await startTestApp({ CALLBACK_DESTINATION_CONCURRENCY: '2', CALLBACK_CONCURRENCY: '8' });
    p = await createPartner(t);
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => {
    await t?.close();
    await rx?.close();
  });

  it('parks a callback that finds no slot at once, neither waiting in the worker nor stepping back into the queue', async () => {
    const hole = blackhole(rx);
    const delivery = t.app.get(CallbackDelivery);
    const deliver = delivery.deliver.bind(delivery);
    const results: DeliveryResult[] = [];
    jest.spyOn(delivery, 'deliver').mockImplementation(async (...args) => {
      const r = await deliver(...args);
      results.push(r);
      return r;
    });
    try {
      const company = await companyWithCallback(t, p, rx.url('/hang'));
      for (let i = 0; i < 20; i++) await company.change();
      // New, so all 20 are queued without slots (trusted); two take the slots and hang, and with no
      // 2xx seen anywhere the other 18 park as they start.
      await until(async () => (await t.sql<{ n: string }>(`SELECT count(*) AS n FROM callbacks WHERE company_id = $1 AND parked_at IS NOT NULL`, [company.c]))[0].n === '18', {
        what: 'eighteen parked',
      });
      expect(rx.hits).toHaveLength(2);
      expect(results.filter((r) => r && 'parked' in r)).toHaveLength(18);
      expect(results.filter((r) => r && 'slotRetryAt' in r)).toEqual([]);
    } finally {
      hole.release();
    }
  });
});
