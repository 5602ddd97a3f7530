import { ChildProcess } from 'node:child_process';
import { buildService, sparePort, startRedis, startService, stop, workerEnv } from './support/processes.js';
import { Receiver } from './support/receiver.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { companyWithCallback, harness, Partner, TestApp, until } from './support/harness.js';
import { runIdentity } from './support/run-identity.js';

describe('nothing is lost when Redis goes away', () => {
  let redisPort: number;
  let redis: ChildProcess;
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;

  beforeAll(async () => {
    redisPort = await sparePort();
    redis = await startRedis(redisPort);
  });
  const e2e = harness(() => ({ REDIS_URL: `redis://127.0.0.1:${redisPort}` }));
  beforeAll(() => ({ t, p, rx } = e2e));
  // This suite's Redis stops after the app closes (hooks run in the order declared).
  afterAll(async () => {
    if (redis) await stop(redis, 'SIGKILL');
  });

  it('commits changes while Redis is down and delivers every callback once it is back', async () => {
    const { change, statuses, c } = await companyWithCallback(t, p, rx.url('/outage'));
    await stop(redis, 'SIGKILL');
    for (let i = 0; i < 3; i++) await change();
    // Admission moves each row to sending and, Redis refusing the job, hands it back at once.
    const attempted = async () =>
      (
        await t.sql<{ n: number }>(
          `SELECT count(*)::int AS n FROM callback_attempts a JOIN callbacks c ON c.id = a.callback_id WHERE c.company_id = $1`,
          [c],
        )
      )[0].n;
    await until(async () => (await statuses()).join() === 'pending,pending,pending', {
      what: 'admissions handed back while Redis is down',
    });
    expect(await attempted()).toBe(0);
    redis = await startRedis(redisPort);
    await until(() => rx.on('/outage').length >= 3, { timeoutMs: 30000, what: 'callbacks after the outage' });
    await until(async () => (await statuses()).every((s) => s === 'delivered'), { what: 'all delivered' });
    expect(new Set(rx.on('/outage').map((h) => h.headers['webhook-id'])).size).toBe(3);
  });

  it('keeps retry waits in PostgreSQL: Redis restarted empty loses none of them', async () => {
    rx.answer = (h, _req, res) =>
      res.writeHead(h.path === '/flushed' && rx.on('/flushed').length === 1 ? 500 : 204).end();
    const { change, c, statuses } = await companyWithCallback(t, p, rx.url('/flushed'));
    await change();
    await until(() => rx.on('/flushed').length === 1, { what: 'first attempt' });
    // The retry waits as a pending row (next_attempt_at), not as a job: Redis holds nothing of it.
    await until(
      async () =>
        (await t.sql<{ n: number }>(`SELECT schedule_attempts AS n FROM callbacks WHERE company_id = $1`, [c]))[0]
          ?.n === 1,
    );
    await stop(redis, 'SIGKILL');
    redis = await startRedis(redisPort);
    await t.sql(`UPDATE callbacks SET next_attempt_at = now() WHERE company_id = $1`, [c]);
    await until(async () => (await statuses())[0] === 'delivered', {
      timeoutMs: 20000,
      what: 'retried after Redis came back empty',
    });
    expect(rx.on('/flushed')).toHaveLength(2);
  });
});

describe('nothing is lost when PostgreSQL goes away', () => {
  let proxy: TcpProxy;
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;

  let proxied: string;

  beforeAll(async () => {
    // The app reaches PostgreSQL through the proxy only; the test cuts it to make an outage.
    const url = new URL(runIdentity().databaseUrl);
    proxy = await TcpProxy.start(Number(url.port || 5432), url.hostname);
    url.port = String(proxy.port);
    proxied = url.toString();
  });
  // The proxy lets the app's connections through again before it closes, and goes after it.
  afterAll(() => proxy?.restore());
  const e2e = harness(() => ({ DATABASE_URL: proxied }));
  beforeAll(() => ({ t, p, rx } = e2e));
  afterAll(() => proxy?.close());

  it('the relay reconnects after an outage and relays what is committed afterwards', async () => {
    const { change, statuses } = await companyWithCallback(t, p, rx.url('/pg-outage'));
    proxy.cut();
    // The relay's own connection is gone; it keeps trying (each try is refused at the proxy).
    await until(() => proxy.refused >= 3, { what: 'the relay trying to reconnect' });
    proxy.restore();
    await change();
    await until(async () => (await statuses()).join() === 'delivered', {
      timeoutMs: 20000,
      what: 'delivered after the outage',
    });
    expect(rx.on('/pg-outage')).toHaveLength(1);
  });
});

describe('worker processes stopped mid-delivery', () => {
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;
  const workers: ChildProcess[] = [];
  const worker = async () => {
    const w = await startService({ ...workerEnv(t), CALLBACK_RETRY_SCHEDULE: '200ms,200ms,200ms' });
    workers.push(w);
    return w;
  };

  beforeAll(() => buildService(), 180_000);
  // The workers stop before the app closes (hooks run in the order declared).
  afterAll(async () => {
    for (const w of workers) await stop(w, 'SIGKILL');
  });
  // The API (and relay) in this process; deliveries only in child worker processes.
  const e2e = harness({ ROLE: 'api' });
  beforeAll(() => ({ t, p, rx } = e2e));

  it('SIGKILL during a delivery: delivered after restart, duplicates only with the same webhook-id', async () => {
    const held: (() => void)[] = [];
    rx.answer = (h, _req, res) => {
      if (h.path === '/kill' && rx.on('/kill').length === 1) held.push(() => res.writeHead(200).end());
      else res.writeHead(200).end();
    };
    const first = await worker();
    const { change, statuses } = await companyWithCallback(t, p, rx.url('/kill'));
    await change();
    await until(() => held.length === 1, { what: 'delivery in flight' });
    await stop(first, 'SIGKILL');
    expect(await statuses()).toEqual(['sending']);
    await worker();
    await until(async () => (await statuses())[0] === 'delivered', {
      timeoutMs: 45000,
      what: 'delivery after restart',
    });
    const hits = rx.on('/kill');
    expect(hits.length).toBeGreaterThanOrEqual(2);
    expect(new Set(hits.map((h) => h.headers['webhook-id'])).size).toBe(1);
  }, 60_000);

  it('SIGTERM drains: the in-flight delivery completes and is recorded before the worker exits', async () => {
    for (const w of workers.splice(0)) await stop(w, 'SIGKILL');
    let release: () => void = () => undefined;
    rx.answer = (h, _req, res) => {
      if (h.path === '/term') release = () => res.writeHead(200).end('drained');
      else res.writeHead(200).end();
    };
    const w = await worker();
    const { change, statuses } = await companyWithCallback(t, p, rx.url('/term'));
    await change();
    await until(() => rx.on('/term').length === 1, { what: 'delivery in flight' });
    const exit = stop(w, 'SIGTERM');
    // The worker waits for the receiver; answer only after the signal has been sent.
    setTimeout(() => release(), 300);
    expect(await exit).toBe(0);
    expect(await statuses()).toEqual(['delivered']);
    expect(rx.on('/term')).toHaveLength(1);
    const [attempt] = await t.sql<{ response_body: string }>(
      `SELECT a.response_body FROM callback_attempts a JOIN callbacks c ON c.id = a.callback_id WHERE c.url = $1`,
      [rx.url('/term')],
    );
    expect(attempt.response_body).toBe('drained');
  }, 60_000);
});

describe('SIGTERM while Redis is down', () => {
  let redis: ChildProcess | undefined;
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;
  let w: (ChildProcess & { output: string[] }) | undefined;

  let redisPort: number;

  beforeAll(async () => {
    buildService();
    redisPort = await sparePort();
    redis = await startRedis(redisPort);
  }, 180_000);
  // The worker and this suite's Redis stop before the app closes, as a deployment's would.
  afterAll(async () => {
    if (w) await stop(w, 'SIGKILL');
    if (redis) await stop(redis, 'SIGKILL');
  });
  const e2e = harness(() => ({ ROLE: 'api', REDIS_URL: `redis://127.0.0.1:${redisPort}` }));
  beforeAll(() => ({ t, p, rx } = e2e));

  it('records the in-flight delivery and exits without waiting for Redis', async () => {
    let release: () => void = () => undefined;
    rx.answer = (h, _req, res) => {
      if (h.path === '/term-down') release = () => res.writeHead(200).end('drained without redis');
      else res.writeHead(200).end();
    };
    w = await startService(workerEnv(t));
    const { change, statuses } = await companyWithCallback(t, p, rx.url('/term-down'));
    await change();
    await until(() => rx.on('/term-down').length === 1, { what: 'delivery in flight' });
    await stop(redis!, 'SIGKILL');
    redis = undefined;
    const exit = stop(w, 'SIGTERM');
    setTimeout(() => release(), 300);
    // Worker.close() alone would wait for Redis forever; the jest timeout is the deadline here.
    expect(await exit).toBe(0);
    expect(await statuses()).toEqual(['delivered']);
    const [attempt] = await t.sql<{ response_body: string }>(
      `SELECT a.response_body FROM callback_attempts a JOIN callbacks c ON c.id = a.callback_id WHERE c.url = $1`,
      [rx.url('/term-down')],
    );
    expect(attempt.response_body).toBe('drained without redis');
    expect(w.output.join('')).toContain('Redis does not answer');
  }, 60_000);
});
