import { ChildProcess } from 'node:child_process';
import http from 'node:http';
import { Webhook } from 'standardwebhooks';
import type { DestinationView } from '../src/delivery/destinations/destinations.service.js';
import { buildService, startService, stop, workerEnv } from './support/processes.js';
import { metric } from './support/metrics.js';
import { Receiver, webhookHeaders } from './support/receiver.js';
import { companyWithCallback, createPartner, harness, Partner, TestApp, until } from './support/harness.js';

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

const destinations = async (t: TestApp, query = '') =>
  (await t.admin('get', `/admin/v1/destinations${query}`).expect(200)).body.items as Destination[];
const destination = async (t: TestApp, rx: Receiver) =>
  (await destinations(t)).find((d) => d.origin === `http://127.0.0.1:${rx.port}`);
/** A counter or gauge; a labelled counter never incremented is not exported yet: 0. */
const counted = async (t: TestApp, series: string): Promise<number> => (await metric(t, series)) ?? 0;
const verified = (p: Partner, h: Receiver['hits'][number]) =>
  new Webhook(p.signingSecret).verify(h.body, webhookHeaders(h.headers));

describe('a dead destination beside a healthy one', () => {
  let t: TestApp;
  let p: Partner;
  let dead: Receiver;
  let ok: Receiver;
  let hole: ReturnType<typeof blackhole>;

  beforeAll(async () => {
    [dead, ok] = await Promise.all([Receiver.start(), Receiver.start()]);
    hole = blackhole(dead);
  });
  // The hanging requests are let go before the app closes (hooks run in the order declared).
  afterAll(() => hole?.release());
  // 10 deliveries in flight per worker, at most 3 to one destination; 3 failures open a circuit.
  const e2e = harness({
    CALLBACK_CONCURRENCY: '10',
    CALLBACK_DESTINATION_CONCURRENCY: '3',
    CALLBACK_BREAKER_THRESHOLD: '3',
    CALLBACK_BREAKER_PROBE: '500ms..1s',
    CALLBACK_TIMEOUT_MS: '3000',
    // Short first retries (a retry that comes due while the circuit is open waits with the rest).
    CALLBACK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1m',
  });
  beforeAll(() => ({ t, p } = e2e));
  afterAll(async () => {
    await dead?.close();
    await ok?.close();
  });

  it('delivers the healthy destination while the dead one hangs, opens the dead circuit, then resumes it by itself', async () => {
    const deadCompany = await companyWithCallback(t, p, dead.url('/never'));
    for (let i = 0; i < 30; i++) await deadCompany.change();
    // A new destination starts with a window of 2: two requests hang.
    await until(() => dead.hits.length === 2, { what: 'the dead destination holding its first window' });

    // The dead destination's two attempts hang for 3 s; the healthy one is not behind them.
    const okCompany = await companyWithCallback(t, p, ok.url('/fine'));
    const started = Date.now();
    for (let i = 0; i < 5; i++) await okCompany.change();
    await until(() => ok.hits.length === 5, { what: 'the healthy destination served', timeoutMs: 2500 });
    expect(Date.now() - started).toBeLessThan(2500);
    const [{ n: attemptsFinished }] = await t.sql<{ n: string }>(
      `SELECT count(*) AS n FROM callback_attempts a JOIN callbacks c ON c.id = a.callback_id WHERE c.company_id = $1`,
      [deadCompany.c],
    );
    expect(Number(attemptsFinished)).toBe(0);
    for (const h of ok.hits) expect(verified(p, h)).toBeTruthy();

    // Two time out together: one that never answered opens at its first timeout; the other 28 wait as pending rows.
    const open = await until(
      async () => ((await destination(t, dead))?.state !== 'closed' ? destination(t, dead) : null),
      { what: 'circuit open' },
    );
    expect(open.consecutiveFailures).toBe(1);
    expect(open.lastError).toBe('timeout: no answer within 3000 ms');
    expect(open.openedAt).not.toBeNull();
    expect(await counted(t, 'funding_destination_circuit_transitions_total{transition="opened"}')).toBe(1);
    // 28 never attempted (one of them may be out as the first probe): pending in PostgreSQL, no job in Redis.
    const [counts] = await t.sql<{ untried: number; sending: number }>(
      `SELECT count(*) FILTER (WHERE attempt_count = 0)::int AS untried, count(*) FILTER (WHERE status = 'sending')::int AS sending FROM callbacks WHERE company_id = $1`,
      [deadCompany.c],
    );
    expect(counts.untried).toBe(28);
    expect(counts.sending).toBeLessThanOrEqual(1);
    expect((await destinations(t, '?state=closed')).map((d) => d.origin)).toContain(`http://127.0.0.1:${ok.port}`);
    // While open: one probe at a time, each timing out again.
    await until(async () => ((await destination(t, dead))?.consecutiveFailures ?? 0) >= 2, {
      what: 'a failed probe',
      timeoutMs: 8000,
    });
    // Its first window of two, then one probe at a time.
    expect(dead.hits.length).toBeLessThanOrEqual(2 + 2);

    // The receiver comes back: the next probe closes the circuit and everything that waited goes.
    hole.recover();
    await until(async () => (await deadCompany.statuses()).every((s) => s === 'delivered'), {
      what: 'the backlog delivered',
      timeoutMs: 15000,
    });
    const d = await destination(t, dead);
    expect(d).toMatchObject({ state: 'closed', consecutiveFailures: 0, waiting: 0, openedAt: null, nextProbeAt: null });
    expect(await counted(t, 'funding_destination_circuit_transitions_total{transition="closed"}')).toBe(1);
    // Each callback with its own webhook-id; the two that hung were attempted again (same ids).
    const ids = (await t.sql<{ id: string }>(`SELECT id FROM callbacks WHERE company_id = $1`, [deadCompany.c])).map(
      (r) => r.id,
    );
    expect(new Set(dead.hits.map((h) => h.headers['webhook-id']))).toEqual(new Set(ids));
    // Probes that failed used none of their callback's schedule: at most the attempt that hung
    // before the circuit opened, and the one that delivered, count.
    const [{ most }] = await t.sql<{ most: number }>(
      `SELECT max(schedule_attempts) AS most FROM callbacks WHERE company_id = $1`,
      [deadCompany.c],
    );
    expect(most).toBeLessThanOrEqual(2);
    // Thirty deliveries, plus only the attempts that hung before the circuit opened and the probes that hung.
    expect(dead.hits.length).toBeLessThanOrEqual(30 + 5 + 2);
  }, 60_000);
});

describe('the breaker counts 5xx and 429, and probes at doubling intervals', () => {
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;

  const e2e = harness({
    CALLBACK_BREAKER_THRESHOLD: '3',
    CALLBACK_BREAKER_PROBE: '300ms..600ms',
    CALLBACK_RETRY_SCHEDULE: '100ms,100ms,100ms,100ms,100ms,100ms,100ms,1m',
  });
  beforeAll(() => ({ t, p, rx } = e2e));

  it.each([
    ['a 500', 500],
    ['a 429', 429],
  ])(
    'opens after three answers of %s, then probes every 300 ms doubling to 600 ms, then closes on a 2xx',
    async (_name, code) => {
      let failing = true;
      rx.answer = (_h, _req, res) => res.writeHead(failing ? code : 200).end();
      const company = await companyWithCallback(t, p, rx.url(`/e${code}`));
      rx.hits.length = 0;
      const id = await company.change();
      const open = await until(async () => ((await destination(t, rx))?.state === 'open' ? destination(t, rx) : null), {
        what: 'circuit open',
      });
      expect(open.lastError).toBe(`HTTP ${code}`);
      // Three attempts opened it; probes follow 300 ms, then 600 ms, 600 ms… apart.
      await until(() => rx.hits.length >= 6, { what: 'three probes', timeoutMs: 8000 });
      const gaps = rx.hits
        .slice(2, 6)
        .map((h, i, a) => (i ? h.at - a[i - 1].at : 0))
        .slice(1);
      expect(gaps[0]).toBeGreaterThanOrEqual(280);
      expect(gaps[1]).toBeGreaterThanOrEqual(580);
      expect(gaps[2]).toBeGreaterThanOrEqual(580);
      expect(new Set(rx.hits.map((h) => h.headers['webhook-id']))).toEqual(new Set([id]));
      failing = false;
      await until(async () => (await company.statuses()).every((s) => s === 'delivered'), {
        what: 'delivered by the probe',
      });
      expect((await destination(t, rx))?.state).toBe('closed');
    },
    30_000,
  );

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

  const e2e = harness({ CALLBACK_BREAKER_THRESHOLD: '1', CALLBACK_BREAKER_PROBE: '10m..10m' });
  beforeAll(() => ({ t, p, rx } = e2e));

  it('sends the probe within a second instead of in 10 minutes; 404 unknown, 409 closed', async () => {
    let up = false;
    rx.answer = (_h, _req, res) => res.writeHead(up ? 200 : 503).end();
    const company = await companyWithCallback(t, p, rx.url('/p'));
    await company.change();
    await until(async () => (await destination(t, rx))?.state === 'open', { what: 'circuit open' });
    await company.change();
    await until(async () => (await destination(t, rx))?.waiting === 2, { what: 'two waiting' });
    expect(await counted(t, 'funding_callbacks_waiting{reason="circuit_open"}')).toBe(2);
    expect(await counted(t, 'funding_destinations_open')).toBe(1);
    up = true;
    const origin = `http://127.0.0.1:${rx.port}`;
    await t.admin('post', '/admin/v1/destinations/probe', { origin }).expect(202);
    await until(async () => (await company.statuses()).every((s) => s === 'delivered'), {
      what: 'delivered after the probe',
    });
    await t.admin('post', '/admin/v1/destinations/probe', { origin }).expect(409);
    await t.admin('post', '/admin/v1/destinations/probe', { origin: 'https://unknown.example' }).expect(404);
    await t.admin('post', '/admin/v1/destinations/probe', {}).expect(400);
    // The origin is one, however it is spelled; a URL with a path is refused, naming the field.
    const refused = (await t.admin('post', '/admin/v1/destinations/probe', { origin: `${origin}/p` }).expect(400)).body;
    expect(JSON.stringify(refused)).toContain("origin must be a callback URL's origin");
    await t.admin('post', '/admin/v1/destinations/probe', { origin: origin.replace('http://', 'HTTP://') }).expect(409);
    expect(
      (
        await t
          .admin('get', `/admin/v1/destinations?origin=${encodeURIComponent(origin.replace('http://', 'HTTP://'))}`)
          .expect(200)
      ).body.items,
    ).toEqual([expect.objectContaining({ origin })]);
    await t.admin('get', `/admin/v1/destinations?origin=${encodeURIComponent(`${origin}/p`)}`).expect(400);
    await t.admin('get', '/admin/v1/destinations?state=broken').expect(400);

    // The partner sees its own destinations, counting only its own callbacks.
    const mine = (await t.as(p.apiKey, 'get', '/v1/callbacks/destinations').expect(200)).body.items as Destination[];
    expect(mine).toEqual([expect.objectContaining({ origin, state: 'closed', waiting: 0, inFlight: 0 })]);
    const other = await createPartner(t, 'Other Bank');
    expect((await t.as(other.apiKey, 'get', '/v1/callbacks/destinations').expect(200)).body).toEqual({ items: [] });
    expect(await destinations(t, `?partnerId=${other.id}`)).toEqual([]);
  });
});

describe('a callback that waits past the end of its schedule', () => {
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;

  const e2e = harness({
    CALLBACK_BREAKER_THRESHOLD: '1',
    CALLBACK_BREAKER_PROBE: '10m..10m',
    CALLBACK_RETRY_SCHEDULE: '1s',
  });
  beforeAll(() => ({ t, p, rx } = e2e));

  it('fails, naming the outage, with none of its attempts used; redelivered, one or in bulk, it goes at once as the probe', async () => {
    rx.answer = (_h, _req, res) => res.writeHead(502).end();
    const company = await companyWithCallback(t, p, rx.url('/gone'));
    await company.change();
    await until(async () => (await destination(t, rx))?.state === 'open', { what: 'circuit open' });
    const id = await company.change();
    const cb = await until(
      async () => {
        const c = (await t.admin('get', `/admin/v1/callbacks/${id}`).expect(200)).body;
        return c.status === 'failed' ? c : null;
      },
      { what: 'failed after its schedule', timeoutMs: 8000 },
    );
    expect(cb.attemptCount).toBe(0);
    expect(cb.lastError).toMatch(
      new RegExp(
        `^destination http://127.0.0.1:${rx.port} unavailable \\(circuit open since .*, last error: HTTP 502\\); attempt schedule ended while waiting$`,
      ),
    );
    expect(rx.hits.filter((h) => h.headers['webhook-id'] === id)).toHaveLength(0);
    expect(await counted(t, 'funding_callbacks_expired_waiting_total')).toBeGreaterThanOrEqual(1);

    // Redelivered while the circuit is still open: taken on both routes, and sent at once as the probe
    // (once each, one at a time: the probe ten minutes away does not hold it); the receiver still
    // fails it, so it waits again, and fails again at the end of its fresh schedule.
    await t.admin('post', `/admin/v1/callbacks/${id}/redeliver`).expect(202);
    await until(() => rx.hits.filter((h) => h.headers['webhook-id'] === id).length === 1, {
      what: 'sent as the probe',
    });
    await until(async () => (await destination(t, rx))?.inFlight === 0, { what: 'the probe settled' });
    await t.as(p.apiKey, 'post', `/v1/callbacks/${id}/redeliver`).expect(202);
    await until(() => rx.hits.filter((h) => h.headers['webhook-id'] === id).length === 2, {
      what: 'sent as the next probe',
    });
    const again = await until(
      async () => {
        const c = (await t.admin('get', `/admin/v1/callbacks/${id}`).expect(200)).body;
        return c.status === 'failed' ? c : null;
      },
      { what: 'failed again after its fresh schedule', timeoutMs: 8000 },
    );
    expect(again.attemptCount).toBe(2);
    expect(again.lastError).toMatch(/attempt schedule ended while waiting$/);
    expect((await destination(t, rx))?.state).toBe('open');
    // Replayed in bulk: it goes as the probe again, with a fresh schedule.
    expect(
      (
        await t
          .as(p.apiKey, 'post', '/v1/callbacks/redeliver', {
            status: 'failed',
            since: cb.createdAt,
            destination: `http://127.0.0.1:${rx.port}`,
          })
          .expect(202)
      ).body,
    ).toEqual({ count: 1 });
    await until(() => rx.hits.filter((h) => h.headers['webhook-id'] === id).length === 3, {
      what: 'sent as the probe after a bulk redelivery',
    });
  });
});

describe('bytes a receiver answers never cost another callback its record', () => {
  let t: TestApp;
  let odd: Receiver;
  const healthy: Receiver[] = [];

  beforeAll(async () => {
    odd = await Receiver.start();
    for (let i = 0; i < 20; i++) healthy.push(await Receiver.start());
  });
  const e2e = harness({}, { partner: null });
  beforeAll(() => ({ t } = e2e));
  afterAll(async () => {
    await odd?.close();
    for (const r of healthy) await r.close();
  });

  it('records NUL and invalid UTF-8 as replacement characters; 20 healthy receivers of another partner get exactly one POST each', async () => {
    const a = await createPartner(t, 'A');
    const b = await createPartner(t, 'B');
    odd.answer = (_h, _req, res) => res.writeHead(200).end(Buffer.from([0x6f, 0x6b, 0x00, 0xff, 0xfe, 0x21]));
    const oddCompany = await companyWithCallback(t, a, odd.url('/odd'));
    const others = await Promise.all(healthy.map((r) => companyWithCallback(t, b, r.url('/h'))));
    const oddId = await oddCompany.change();
    for (const o of others) await o.change();
    await until(
      async () => {
        const rows = await t.sql<{ status: string }>(`SELECT status FROM callbacks`);
        return rows.length === 21 && rows.every((r) => r.status === 'delivered');
      },
      { what: 'all delivered', timeoutMs: 15000 },
    );
    const cb = (await t.admin('get', `/admin/v1/callbacks/${oddId}`).expect(200)).body;
    expect(cb.attempts).toHaveLength(1);
    expect(cb.attempts[0].responseBody).toBe('ok\ufffd\ufffd\ufffd!');
    // Delivered exactly once each: no record lost, so nothing was sent again.
    await until(async () => (await t.sql(`SELECT 1 FROM callback_attempts`)).length === 21, {
      what: 'every attempt recorded',
    });
    for (const r of healthy) expect(r.hits).toHaveLength(1);
    expect(odd.hits).toHaveLength(1);
    expect(await counted(t, 'funding_callback_record_failures_total{stage="lost"}')).toBe(0);
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
  const shared = {
    CALLBACK_DESTINATION_CONCURRENCY: '4',
    CALLBACK_BREAKER_THRESHOLD: '2',
    CALLBACK_BREAKER_PROBE: '1s..1s',
    CALLBACK_RETRY_SCHEDULE: '100ms,100ms,1m',
  };

  beforeAll(() => buildService(), 180_000);
  // The worker processes stop before the app closes (hooks run in the order declared).
  afterAll(async () => {
    for (const w of workers) await stop(w, 'SIGKILL');
  });
  const e2e = harness({ ROLE: 'api', ...shared });
  beforeAll(() => ({ t, p, rx } = e2e));

  it('two workers together keep at most 4 requests open at one destination', async () => {
    const answers = slowAnswers(rx, 150);
    await Promise.all([worker(), worker()]);
    const company = await companyWithCallback(t, p, rx.url('/slow'));
    for (let i = 0; i < 40; i++) await company.change();
    await until(async () => (await company.statuses()).every((s) => s === 'delivered'), {
      what: '40 delivered',
      timeoutMs: 30000,
    });
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
    await until(async () => (await company.statuses()).every((s) => s === 'delivered'), {
      what: 'delivered after the restart',
      timeoutMs: 15000,
    });
    expect(await stop(workers[0], 'SIGTERM')).toBe(0);
    const hits = rx.on('/restart');
    // Two 500s opened it; then the probe and the two that waited: 5 requests, 3 of them 2xx.
    expect(hits.length).toBe(5);
  }, 60_000);
});

describe('a storm of dead destinations beside a healthy one', () => {
  let t: TestApp;
  let p: Partner;
  const dead: Receiver[] = [];
  let ok: Receiver;

  beforeAll(async () => {
    for (let i = 0; i < 8; i++) {
      const r = await Receiver.start();
      blackhole(r);
      dead.push(r);
    }
    ok = await Receiver.start();
  });
  // 10 delivery slots in all: 8 new destinations whose requests hang could hold them all, were it not
  // for the shares and the waiting places (delivery-slots.ts).
  const e2e = harness({ CALLBACK_CONCURRENCY: '10', CALLBACK_TIMEOUT_MS: '10000', CALLBACK_BREAKER_THRESHOLD: '3' });
  beforeAll(() => ({ t, p } = e2e));
  afterAll(async () => {
    for (const r of [...dead, ok]) await r?.close();
  });

  it('never lets unproven destinations hold more than half the slots, their hanging requests in waiting places: the healthy one is served at once', async () => {
    // The healthy destination has answered before (it is proven); then the storm begins.
    const healthy = await companyWithCallback(t, p, ok.url('/fine'));
    await healthy.change();
    await until(() => ok.hits.length === 1, { what: 'the healthy destination proven' });
    for (const r of dead) {
      const company = await companyWithCallback(t, p, r.url('/hang'));
      for (let i = 0; i < 5; i++) await company.change();
    }
    // Each hangs its window of two: 16 requests, which only waiting places (160) hold.
    await until(() => dead.reduce((n, r) => n + r.hits.length, 0) === 16, { what: 'every window hanging' });
    const started = Date.now();
    for (let i = 0; i < 10; i++) await healthy.change();
    await until(() => ok.hits.length === 11, {
      what: 'the healthy destination served beside the storm',
      timeoutMs: 4000,
    });
    expect(Date.now() - started).toBeLessThan(4000);
    // Still only their windows hang: two each.
    expect(dead.reduce((n, r) => n + r.hits.length, 0)).toBe(16);
    for (const r of dead) expect(r.hits.length).toBe(2);
    for (const h of ok.hits) expect(verified(p, h)).toBeTruthy();
  }, 30_000);
});
