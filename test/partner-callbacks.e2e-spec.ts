import { Receiver } from './support/receiver.js';
import { companyWithCallback, createPartner, harness, Partner, TestApp, until } from './support/harness.js';

interface Item {
  id: string;
  message: number;
  status: string;
  companyId: string;
}

describe("the partner's own delivery log (/v1/callbacks)", () => {
  let t: TestApp;
  let acme: Partner;
  let other: Partner;
  let rx: Receiver;
  // Acme: company A (4 callbacks: 0, 0, 0 delivered, and one failed by a 410); company B (1 pending).
  let a: Awaited<ReturnType<typeof companyWithCallback>>;
  let b: Awaited<ReturnType<typeof companyWithCallback>>;
  const delivered: string[] = [];
  let failed: string;
  let pending: string;
  let theirs: string;

  const list = (p: Partner, query = '') => t.as(p.apiKey, 'get', `/v1/callbacks${query}`);
  const statusOf = async (id: string) =>
    (await t.sql<{ status: string }>('SELECT status FROM callbacks WHERE id = $1', [id]))[0].status;

  // One retry an hour away: a callback answered 500 stays pending for the whole file.
  const e2e = harness({ CALLBACK_RETRY_SCHEDULE: '1h' });
  beforeAll(async () => {
    ({ t, rx, p: acme } = e2e);
    rx.answer = (h, _req, res) => {
      if (h.path === '/gone') return res.writeHead(410).end('gone');
      if (h.path === '/down') return res.writeHead(500).end('down');
      res.writeHead(204).end();
    };
    other = await createPartner(t, 'Other Bank');

    a = await companyWithCallback(t, acme, rx.url('/a'));
    for (let i = 0; i < 3; i++) delivered.push(await a.change());
    const gone = await companyWithCallback(t, acme, rx.url('/gone'));
    failed = await gone.change();
    b = await companyWithCallback(t, acme, rx.url('/down'));
    pending = await b.change();
    const theirCompany = await companyWithCallback(t, other, rx.url('/theirs'));
    theirs = await theirCompany.change();

    await until(async () => (await Promise.all(delivered.map(statusOf))).every((s) => s === 'delivered'), {
      what: 'three delivered',
    });
    await until(async () => (await statusOf(failed)) === 'failed', { what: 'one failed' });
    await until(
      async () => (await t.sql('SELECT 1 FROM callback_attempts WHERE callback_id = $1', [pending])).length === 1,
      { what: 'a first attempt of the pending one' },
    );
    await until(async () => (await statusOf(theirs)) === 'delivered', { what: "the other partner's" });
  });

  it('lists only the partner’s own callbacks, newest first', async () => {
    const items = (await list(acme).expect(200)).body.items as Item[];
    expect(items.map((i) => i.id)).toEqual([pending, failed, ...[...delivered].reverse()]);
    expect(items.map((i) => i.id)).not.toContain(theirs);
    const theirItems = (await list(other).expect(200)).body.items as Item[];
    expect(theirItems.map((i) => i.id)).toEqual([theirs]);
    expect((await list(acme).expect(200)).body.nextCursor).toBeNull();
  });

  it('filters by status, company and message', async () => {
    const ids = async (q: string) => ((await list(acme, q).expect(200)).body.items as Item[]).map((i) => i.id);
    expect(await ids('?status=failed')).toEqual([failed]);
    expect(await ids('?status=pending')).toEqual([pending]);
    expect(await ids(`?companyId=${a.c}`)).toEqual([...delivered].reverse());
    expect(await ids(`?companyId=${a.c}&status=delivered&message=0`)).toEqual([...delivered].reverse());
    expect(await ids('?message=2')).toEqual([]);
    // Another partner's company: nothing, as for any company without callbacks.
    const theirCompany = (
      await t.sql<{ company_id: string }>('SELECT company_id FROM callbacks WHERE id = $1', [theirs])
    )[0].company_id;
    expect(await ids(`?companyId=${theirCompany}`)).toEqual([]);
  });

  it('pages with an opaque cursor', async () => {
    const first = (await list(acme, '?limit=2').expect(200)).body;
    expect(first.items.map((i: Item) => i.id)).toEqual([pending, failed]);
    expect(typeof first.nextCursor).toBe('string');
    const second = (await list(acme, `?limit=2&cursor=${first.nextCursor}`).expect(200)).body;
    expect(second.items.map((i: Item) => i.id)).toEqual([delivered[2], delivered[1]]);
    const third = (await list(acme, `?limit=2&cursor=${second.nextCursor}`).expect(200)).body;
    expect(third.items.map((i: Item) => i.id)).toEqual([delivered[0]]);
    expect(third.nextCursor).toBeNull();
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['limit=', 'limit'],
    ['limit=1e2', 'limit'],
    ['message=', 'message'],
    ['message=5', 'message'],
    ['message=0x1', 'message'],
    ['status=sent', 'status'],
    ['status=failed&status=pending', 'status'],
    ['companyId=not-a-uuid', 'companyId'],
    ['cursor=', 'cursor'],
    ['cursor=bm90LWEtY3Vyc29y', 'cursor'],
    ['page=2', 'page'],
  ])('refuses ?%s with 400 naming %s', async (query, name) => {
    const res = await list(acme, `?${query}`).expect(400);
    expect(res.body.message.join(' ')).toContain(name);
  });

  it('shows one callback with its attempts', async () => {
    const body = (await t.as(acme.apiKey, 'get', `/v1/callbacks/${failed}`).expect(200)).body;
    expect(body).toMatchObject({
      id: failed,
      status: 'failed',
      attemptCount: 1,
      lastError: 'HTTP 410',
      nextAttemptAt: null,
    });
    expect(body.attempts).toEqual([
      {
        number: 1,
        startedAt: expect.any(String),
        durationMs: expect.any(Number),
        statusCode: 410,
        error: 'HTTP 410',
        responseBody: 'gone',
        sourceAddress: expect.any(String),
      },
    ]);
    const waiting = (await t.as(acme.apiKey, 'get', `/v1/callbacks/${pending}`).expect(200)).body;
    expect(waiting).toMatchObject({ status: 'pending', attemptCount: 1, lastError: 'HTTP 500' });
    expect(Date.parse(waiting.nextAttemptAt)).toBeGreaterThan(Date.now() + 40 * 60_000);
  });

  it("answers 404 for another partner's callback, on read and on redelivery", async () => {
    await t.as(other.apiKey, 'get', `/v1/callbacks/${failed}`).expect(404);
    await t.as(other.apiKey, 'post', `/v1/callbacks/${failed}/redeliver`).expect(404);
    await t.as(acme.apiKey, 'get', `/v1/callbacks/${theirs}`).expect(404);
    await t.as(acme.apiKey, 'post', '/v1/callbacks/00000000-0000-4000-8000-000000000000/redeliver').expect(404);
    await t.as(acme.apiKey, 'get', '/v1/callbacks/not-a-uuid').expect(400);
    expect(await statusOf(failed)).toBe('failed');
  });

  it('attempts a pending callback in an hour-long backoff at once, with the same webhook-id, its schedule going on', async () => {
    expect(rx.on('/down')).toHaveLength(1);
    const asked = Date.now();
    await t.as(acme.apiKey, 'post', `/v1/callbacks/${pending}/redeliver`).expect(202);
    const hits = await until(() => (rx.on('/down').length === 2 ? rx.on('/down') : null), {
      what: 'the attempt made now',
      timeoutMs: 10_000,
    });
    expect(hits[1].at - asked).toBeLessThan(10_000);
    expect(hits.map((h) => h.headers['webhook-id'])).toEqual([pending, pending]);
    // The schedule ('1h': one retry) went on from its first attempt: this was its last, so the
    // callback failed. A fresh schedule would have made it wait another hour.
    await until(async () => (await statusOf(pending)) === 'failed', { what: 'failed after its last attempt' });
    const [row] = await t.sql<{ schedule_attempts: number }>('SELECT schedule_attempts FROM callbacks WHERE id = $1', [
      pending,
    ]);
    expect(row.schedule_attempts).toBe(2);
  });

  it('redelivers a delivered callback with the same webhook-id and a fresh schedule', async () => {
    const id = delivered[0];
    const before = rx.on('/a').filter((h) => h.headers['webhook-id'] === id).length;
    expect(before).toBe(1);
    await t.as(acme.apiKey, 'post', `/v1/callbacks/${id}/redeliver`).expect(202);
    await until(() => rx.on('/a').filter((h) => h.headers['webhook-id'] === id).length === 2, {
      what: 'the redelivery',
    });
    const body = await until(
      async () => {
        const r = (await t.as(acme.apiKey, 'get', `/v1/callbacks/${id}`).expect(200)).body;
        return r.status === 'delivered' && r.attemptCount === 2 ? r : null;
      },
      { what: 'delivered again' },
    );
    expect(body.attempts.map((x: { number: number; statusCode: number }) => [x.number, x.statusCode])).toEqual([
      [1, 204],
      [2, 204],
    ]);
  });

  it('redelivers a failed callback: the receiver gets the same webhook-id again', async () => {
    rx.answer = (h, _req, res) => (h.path === '/down' ? res.writeHead(500).end('down') : res.writeHead(204).end());
    await t.as(acme.apiKey, 'post', `/v1/callbacks/${failed}/redeliver`).expect(202);
    const hits = await until(() => (rx.on('/gone').length === 2 ? rx.on('/gone') : null), {
      what: 'the redelivery of the failed one',
    });
    expect(hits.map((h) => h.headers['webhook-id'])).toEqual([failed, failed]);
    await until(async () => (await statusOf(failed)) === 'delivered', { what: 'delivered after redelivery' });
  });

  it('refuses an unknown query parameter of its destinations list, naming it, as every list does', async () => {
    const res = await t.as(acme.apiKey, 'get', '/v1/callbacks/destinations?foo=1').expect(400);
    expect(res.body).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: ['query parameter foo is not accepted; this operation takes none'],
      code: 'invalid_request',
    });
    await t.as(acme.apiKey, 'get', '/v1/callbacks/destinations').expect(200);
  });

  it('is in the OpenAPI document', async () => {
    const paths = (await t.http().get('/docs-json').expect(200)).body.paths;
    expect(paths['/v1/callbacks'].get.responses['200']).toBeDefined();
    expect(paths['/v1/callbacks/{callbackId}'].get.responses['404']).toBeDefined();
    expect(paths['/v1/callbacks/{callbackId}/redeliver'].post.responses['409']).toBeDefined();
  });

  it('needs the partner key, while /v1/callbacks/source-ips stays public', async () => {
    await t.http().get('/v1/callbacks').expect(401);
    await t.http().get(`/v1/callbacks/${failed}`).expect(401);
    await t.http().get('/v1/callbacks/source-ips').expect(200);
  });
});
