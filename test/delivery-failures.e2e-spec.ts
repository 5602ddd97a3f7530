import dns from 'node:dns';
import { Webhook } from 'standardwebhooks';
import { DNS_LOOKUP } from '../src/egress/callback-sender.js';
import { Receiver } from './support/receiver.js';
import { companyWithCallback, harness, Partner, TestApp, until } from './support/harness.js';

interface Attempt {
  number: number;
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
  sourceAddress: string | null;
}

describe('callback delivery when the receiver misbehaves', () => {
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;
  const show = async (id: string) => (await t.admin('get', `/admin/v1/callbacks/${id}`).expect(200)).body;
  const settled = (id: string, status: string) =>
    until(async () => ((await show(id)).status === status ? show(id) : null), {
      what: `callback ${status}`,
      timeoutMs: 20000,
    });

  // Three attempts 300 ms apart, 500 ms per attempt: the whole schedule runs within seconds.
  // These tests are about one callback's retries; all share one receiver (one destination), so
  // its circuit breaker is kept out of the way here (it has its own suite, isolation.e2e-spec).
  const e2e = harness({
    CALLBACK_RETRY_SCHEDULE: '300ms,300ms',
    CALLBACK_TIMEOUT_MS: '500',
    CALLBACK_BREAKER_THRESHOLD: '1000',
  });
  beforeAll(() => ({ t, p, rx } = e2e));

  it('retries after a 500 and records both attempts', async () => {
    let n = 0;
    rx.answer = (h, _req, res) =>
      h.path === '/flaky' && n++ === 0 ? res.writeHead(500).end('boom') : res.writeHead(200).end('ok');
    const { change } = await companyWithCallback(t, p, rx.url('/flaky'));
    const id = await change();
    const cb = await settled(id, 'delivered');
    expect(cb.attemptCount).toBe(2);
    expect(cb.attempts.map((a: Attempt) => [a.number, a.statusCode, a.error, a.responseBody])).toEqual([
      [1, 500, 'HTTP 500', 'boom'],
      [2, 200, null, 'ok'],
    ]);
    const hits = rx.on('/flaky');
    expect(hits).toHaveLength(2);
    expect(hits[0].headers['webhook-id']).toBe(id);
    expect(hits[1].headers['webhook-id']).toBe(id);
    expect(hits[1].at - hits[0].at).toBeGreaterThanOrEqual(240); // 300 ms − 20 % jitter
  });

  it('waits at least Retry-After after a 429', async () => {
    let n = 0;
    rx.answer = (h, _req, res) =>
      h.path === '/busy' && n++ === 0 ? res.writeHead(429, { 'retry-after': '2' }).end() : res.writeHead(204).end();
    const { change } = await companyWithCallback(t, p, rx.url('/busy'));
    const id = await change();
    await settled(id, 'delivered');
    const hits = rx.on('/busy');
    expect(hits).toHaveLength(2);
    expect(hits[1].at - hits[0].at).toBeGreaterThanOrEqual(1900);
  });

  it('does not follow a redirect: 302 is a failure, the target never hears of it', async () => {
    rx.answer = (h, _req, res) =>
      h.path === '/moved' ? res.writeHead(302, { location: rx.url('/target') }).end() : res.writeHead(204).end();
    const { change } = await companyWithCallback(t, p, rx.url('/moved'));
    const id = await change();
    const cb = await settled(id, 'failed');
    expect(cb.attempts.map((a: Attempt) => a.statusCode)).toEqual([302, 302, 302]);
    expect(cb.lastError).toBe('HTTP 302 (attempt schedule exhausted)');
    expect(rx.on('/target')).toHaveLength(0);
  });

  it('treats a receiver slower than the timeout as a failed attempt', async () => {
    let n = 0;
    rx.answer = (h, _req, res) => {
      if (h.path === '/slow' && n++ === 0) setTimeout(() => res.writeHead(200).end(), 1500);
      else res.writeHead(200).end();
    };
    const { change } = await companyWithCallback(t, p, rx.url('/slow'));
    const id = await change();
    const cb = await settled(id, 'delivered');
    expect(cb.attempts.map((a: Attempt) => a.error)).toEqual(['timeout: no answer within 500 ms', null]);
  });

  it('fails a callback whose receiver never answers, then redelivers it with the same webhook-id', async () => {
    let answering = false;
    rx.answer = (h, _req, res) => {
      if (h.path !== '/silent' || answering) res.writeHead(200).end();
    };
    const { change, c } = await companyWithCallback(t, p, rx.url('/silent'));
    const id = await change();
    const failed = await settled(id, 'failed');
    expect(failed.attemptCount).toBe(3);
    expect(failed.nextAttemptAt).toBeNull();
    expect(failed.lastError).toBe('timeout: no answer within 500 ms (attempt schedule exhausted)');
    const list = (await t.admin('get', `/admin/v1/callbacks?status=failed&companyId=${c}`).expect(200)).body.items;
    expect(list.map((i: { id: string }) => i.id)).toEqual([id]);

    answering = true;
    await t.admin('post', `/admin/v1/callbacks/${id}/redeliver`).expect(202);
    const delivered = await settled(id, 'delivered');
    expect(delivered.attemptCount).toBe(4);
    expect(delivered.lastError).toBeNull();
    const hits = rx.on('/silent');
    expect(hits).toHaveLength(4);
    expect(new Set(hits.map((h) => h.headers['webhook-id']))).toEqual(new Set([id]));
    expect(
      new Webhook(p.signingSecret).verify(hits[3].body, {
        'webhook-id': id,
        'webhook-timestamp': String(hits[3].headers['webhook-timestamp']),
        'webhook-signature': String(hits[3].headers['webhook-signature']),
      }),
    ).toBeTruthy();
  });

  it('redelivers all failed callbacks of a company in bulk', async () => {
    let up = false;
    rx.answer = (h, _req, res) => res.writeHead(h.path === '/down' && !up ? 503 : 200).end();
    const { change, c } = await companyWithCallback(t, p, rx.url('/down'));
    const ids = [await change(), await change()];
    for (const id of ids) await settled(id, 'failed');
    up = true;
    const res = await t.admin('post', '/admin/v1/callbacks/redeliver', { status: 'failed', companyId: c }).expect(202);
    expect(res.body).toEqual({ count: 2 });
    for (const id of ids) await settled(id, 'delivered');
    await t.admin('post', '/admin/v1/callbacks/redeliver', { status: 'delivered' }).expect(400);
    await t.admin('post', '/admin/v1/callbacks/redeliver', { status: 'failed', since: 'yesterday' }).expect(400);
    await t.admin('post', '/admin/v1/callbacks/00000000-0000-4000-8000-000000000000/redeliver').expect(404);
  });

  it('folds an outcome again over its destination when another process wrote the destination in between', async () => {
    rx.answer = (h, _req, res) => (h.path === '/refold' ? res.writeHead(500).end() : res.writeHead(204).end());
    const { change } = await companyWithCallback(t, p, rx.url('/refold'));
    const first = await change();
    await settled(first, 'failed');
    const failures = async () =>
      (
        await t.sql<{ failures: number }>('SELECT failures FROM destinations WHERE origin = $1', [
          new URL(rx.url('/')).origin,
        ])
      )[0].failures;
    const before = await failures();
    // Another process's settlements, which this one has not seen: two failures more, a new version.
    await t.sql('UPDATE destinations SET failures = failures + 2, version = version + 1 WHERE origin = $1', [
      new URL(rx.url('/')).origin,
    ]);
    const second = await change();
    await settled(second, 'failed');
    // Its three failed attempts count on top of the other process's two, none lost or counted over a stale state.
    expect(await failures()).toBe(before + 2 + 3);
  });

  it('serves the queue dashboard only to the operator (Bearer or Basic)', async () => {
    const none = await t.http().get('/admin/queues').expect(401);
    expect(none.headers['www-authenticate']).toMatch(/^Basic/);
    await t.http().get('/admin/queues').auth('admin', 'wrong').expect(401);
    await t.http().get('/admin/queues').set('Authorization', `Bearer ${p.apiKey}`).expect(401);
    const page = await t.admin('get', '/admin/queues').expect(200);
    expect(page.text).toContain('<html');
    await t.http().get('/admin/queues').auth('admin', 'test-admin-token-0123456789').expect(200);
  });

  it('exports delivery metrics in Prometheus text format', async () => {
    const res = await t.http().get('/metrics').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toMatch(/funding_callback_attempts_total\{result="delivered",kind="http"\} \d+/);
    expect(res.text).toMatch(/funding_callbacks\{status="failed"\} \d+/);
  });
});

describe('connect-time destination check (DNS rebinding)', () => {
  let t: TestApp;
  let p: Partner;
  // The partner's host name resolves to a public address when registered, then to a private one.
  const answers: string[] = ['93.184.215.14'];
  const lookups: string[] = [];
  const lookup = ((
    host: string,
    options: dns.LookupOptions,
    cb: (e: Error | null, a: dns.LookupAddress[] | string, f?: number) => void,
  ) => {
    lookups.push(host);
    const address = answers.length > 1 ? answers.shift()! : answers[0];
    const list = [{ address, family: 4 }];
    if (options?.all) cb(null, list);
    else cb(null, address, 4);
  }) as unknown as typeof dns.lookup;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const { TCP } = (process as any).binding('tcp_wrap');
  let connectSpy: jest.SpyInstance;

  // The spy goes before the app closes (hooks run in the order declared).
  afterAll(() => connectSpy?.mockRestore());
  const e2e = harness(
    { CALLBACK_ALLOW_HTTP: 'false', CALLBACK_ALLOW_PRIVATE_TARGETS: 'false' },
    { configure: (b) => b.overrideProvider(DNS_LOOKUP).useValue(lookup) },
  );
  beforeAll(() => ({ t, p } = e2e));

  it('fails the callback at once, with a clear error and no connection attempt, when the name now resolves to 10.0.0.1', async () => {
    const c = (
      await t
        .as(p.apiKey, 'post', '/v1/companies', { name: 'Rebind', status_callback: 'https://partner.example/cb' })
        .expect(201)
    ).body.id;
    expect(lookups).toEqual(['partner.example']);
    answers.splice(0, answers.length, '10.0.0.1');
    connectSpy = jest.spyOn(TCP.prototype, 'connect');
    await t.admin('patch', `/admin/v1/companies/${c}/credit`, { creditStatus: 'closed' }).expect(200);
    const [item] = (await t.admin('get', `/admin/v1/callbacks?companyId=${c}`).expect(200)).body.items;
    const cb = await until(
      async () => {
        const r = (await t.admin('get', `/admin/v1/callbacks/${item.id}`)).body;
        return r.status === 'failed' ? r : null;
      },
      { what: 'refused callback failed' },
    );
    expect(cb.attemptCount).toBe(1);
    expect(cb.lastError).toBe(
      'destination refused: partner.example resolves to 10.0.0.1, a private address (10.0.0.0/8, RFC 1918)',
    );
    expect(cb.attempts[0]).toMatchObject({ statusCode: null, error: cb.lastError });
    const targets = connectSpy.mock.calls.map((call) => String(call[1]));
    expect(targets.filter((a) => !a.startsWith('127.'))).toEqual([]);
    expect(lookups.length).toBeGreaterThanOrEqual(2);
  });
});
