import { Webhook } from 'standardwebhooks';
import { Receiver, webhookHeaders } from './support/receiver.js';
import { ADMIN_TOKEN, createPartner, harness, Partner, TestApp, until } from './support/harness.js';

/** POST /v1/callbacks/test: one signed attempt through the ordinary delivery path. */
describe('test callbacks', () => {
  let t: TestApp;
  let acme: Partner;
  let other: Partner;
  let rx: Receiver;
  let c: string;

  const view = async (p: Partner, id: string) => (await t.as(p.apiKey, 'get', `/v1/callbacks/${id}`).expect(200)).body;
  const tracked = () =>
    Promise.all([
      t.sql('SELECT * FROM companies ORDER BY id'),
      t.sql('SELECT * FROM limit_requests ORDER BY id'),
      t.sql('SELECT * FROM withdrawal_requests ORDER BY id'),
      t.sql('SELECT * FROM loans ORDER BY id'),
      t.sql('SELECT id, status FROM callbacks WHERE NOT test ORDER BY id'),
    ]);

  // A schedule with retries a second apart: a test callback that fails must not use them.
  const e2e = harness({ CALLBACK_RETRY_SCHEDULE: '1s,1s,1s' });
  beforeAll(async () => {
    ({ t, rx, p: acme } = e2e);
    rx.answer = (h, _req, res) =>
      h.path.startsWith('/down') ? res.writeHead(500).end('no') : res.writeHead(204).end();
    other = await createPartner(t, 'Other Bank');
    c = (
      await t
        .as(acme.apiKey, 'post', '/v1/companies', { name: 'Acme Trading', status_callback: rx.url('/company') })
        .expect(201)
    ).body.id;
  });

  it('sends one attempt at once to the company URL, signed and verifiable, with the five-key body; changes nothing', async () => {
    const before = await tracked();
    const res = await t.as(acme.apiKey, 'post', '/v1/callbacks/test', { companyId: c }).expect(202);
    expect(res.body).toMatchObject({
      message: 0,
      name: 'CreditLimitUpdated',
      url: rx.url('/company'),
      status: 'pending',
      test: true,
      companyId: c,
      attemptCount: 0,
    });
    const id = res.body.id as string;
    const hit = await until(() => rx.on('/company').find((h) => h.headers['webhook-id'] === id), {
      what: 'the test callback',
    });
    const body = `{"message":0,"withdrawalId":null,"companyId":"${c}","limitRequestId":null,"loanId":null}`;
    expect(hit.body).toBe(body);
    expect(new Webhook(acme.signingSecret).verify(hit.body, webhookHeaders(hit.headers))).toEqual(JSON.parse(body));
    expect(() => new Webhook(other.signingSecret).verify(hit.body, webhookHeaders(hit.headers))).toThrow();
    expect(hit.headers['user-agent']).toMatch(/^funding-service-callbacks\//);
    await until(async () => (await view(acme, id)).status === 'delivered', { what: 'delivered' });
    const shown = await view(acme, id);
    expect(shown.attempts).toEqual([
      expect.objectContaining({ number: 1, statusCode: 204, sourceAddress: expect.any(String) }),
    ]);
    expect(await tracked()).toEqual(before);
  });

  it('takes ids from the most recent resource of the kind, or a given url; kinds the company lacks are null', async () => {
    const first = (
      await t
        .as(acme.apiKey, 'post', `/v1/companies/${c}/limit-requests`, { amount: '10', status_callback: rx.url('/lr1') })
        .expect(201)
    ).body.id;
    const second = (
      await t
        .as(acme.apiKey, 'post', `/v1/companies/${c}/limit-requests`, { amount: '20', status_callback: rx.url('/lr2') })
        .expect(201)
    ).body.id;
    expect(first).not.toBe(second);
    const three = (await t.as(acme.apiKey, 'post', '/v1/callbacks/test', { companyId: c, message: 3 }).expect(202))
      .body;
    expect(three).toMatchObject({
      url: rx.url('/lr2'),
      body: { message: 3, withdrawalId: null, companyId: c, limitRequestId: second, loanId: null },
    });
    // No withdrawal: no URL to use (422), unless one is given; its ids are null.
    const none = await t.as(acme.apiKey, 'post', '/v1/callbacks/test', { companyId: c, message: 1 }).expect(422);
    expect(none.body.message).toMatch(/No URL for message 1 .*pass url/);
    const one = (
      await t
        .as(acme.apiKey, 'post', '/v1/callbacks/test', { companyId: c, message: 4, url: rx.url('/given') })
        .expect(202)
    ).body;
    expect(one).toMatchObject({
      url: rx.url('/given'),
      body: { message: 4, withdrawalId: null, companyId: c, limitRequestId: null, loanId: null },
    });
    await until(() => rx.on('/given').length === 1 && rx.on('/lr2').length === 1, { what: 'both test callbacks' });
    expect(rx.on('/lr1')).toHaveLength(0);
  });

  it('a failed attempt is not retried: failed after one attempt', async () => {
    const res = await t
      .as(acme.apiKey, 'post', '/v1/callbacks/test', { companyId: c, url: rx.url('/down') })
      .expect(202);
    await until(async () => (await view(acme, res.body.id)).status === 'failed', { what: 'failed' });
    const shown = await view(acme, res.body.id);
    expect(shown).toMatchObject({
      attemptCount: 1,
      nextAttemptAt: null,
      lastError: 'HTTP 500 (attempt schedule exhausted)',
    });
    expect(rx.on('/down')).toHaveLength(1);
    // The schedule's first retry (1 s) has passed, and nothing was sent again.
    await until(
      async () =>
        (
          await t.sql<{ ok: boolean }>(
            `SELECT now() > max(started_at) + interval '2 seconds' AS ok FROM callback_attempts WHERE callback_id = $1`,
            [res.body.id],
          )
        )[0].ok,
      { what: '2 s' },
    );
    expect(rx.on('/down')).toHaveLength(1);
  });

  it('cannot be redelivered (409 naming why), by the partner, an operator or the dashboard; a bulk redelivery skips it', async () => {
    const res = await t
      .as(acme.apiKey, 'post', '/v1/callbacks/test', { companyId: c, url: rx.url('/down-once') })
      .expect(202);
    const id = res.body.id as string;
    await until(async () => (await view(acme, id)).status === 'failed', { what: 'failed' });
    const refusals = [
      await t.as(acme.apiKey, 'post', `/v1/callbacks/${id}/redeliver`).expect(409),
      await t.admin('post', `/admin/v1/callbacks/${id}/redeliver`).expect(409),
      await t
        .http()
        .put(`/admin/queues/api/queues/callbacks/${id}/retry`)
        .set('Authorization', `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`)
        .expect(409),
    ];
    for (const r of refusals)
      expect(r.body.message).toMatch(
        /^A test callback cannot be redelivered: it gets one attempt; send a new one \(POST \/v1\/callbacks\/test\)/,
      );
    const bulk = await t.admin('post', '/admin/v1/callbacks/redeliver', { status: 'failed', companyId: c }).expect(202);
    expect(bulk.body.count).toBe(0);
    expect(await view(acme, id)).toMatchObject({ status: 'failed', attemptCount: 1 });
    expect(rx.on('/down-once')).toHaveLength(1);
    expect(
      (await t.sql(`SELECT 1 FROM audit_entries WHERE action = 'callback.redeliver' AND target_id = $1`, [id])).length,
    ).toBe(0);
  });

  it("while its destination's circuit is open: failed at once, naming the open circuit, nothing sent", async () => {
    const url = `http://localhost:${rx.port}/open`; // its own destination (origin), so the others keep going
    // The partner's destination at that origin (another partner's there would be its own).
    await t.sql(
      `INSERT INTO destinations (key, partner_id, origin, opened_at, next_probe_at, last_error) VALUES ($1 || ' ' || $2, $1::uuid, $2, now(), now() + interval '1 hour', 'HTTP 503')
                 ON CONFLICT (key) DO UPDATE SET opened_at = now(), next_probe_at = now() + interval '1 hour', last_error = 'HTTP 503'`,
      [acme.id, `http://localhost:${rx.port}`],
    );
    const res = await t.as(acme.apiKey, 'post', '/v1/callbacks/test', { companyId: c, url }).expect(202);
    expect(res.body).toMatchObject({ status: 'failed', attemptCount: 0, test: true, nextAttemptAt: null });
    expect(res.body.lastError).toMatch(
      new RegExp(
        `^destination http://localhost:${rx.port} circuit open since .*\\(last error: HTTP 503\\); test callback not sent$`,
      ),
    );
    expect(rx.on('/open')).toHaveLength(0);
  });

  it('test callbacks are listed with test: true (real ones false) by partners and operators, and never in the feed', async () => {
    await t.admin('patch', `/admin/v1/companies/${c}/credit`, { repaymentTermDays: 77 }).expect(200);
    const mine = (await t.as(acme.apiKey, 'get', `/v1/callbacks?companyId=${c}&limit=200`).expect(200)).body.items as {
      test: boolean;
    }[];
    const ops = (await t.admin('get', `/admin/v1/callbacks?companyId=${c}&limit=200`).expect(200)).body.items as {
      test: boolean;
    }[];
    for (const list of [mine, ops]) {
      expect(list.filter((i) => i.test).length).toBeGreaterThanOrEqual(5);
      expect(list.filter((i) => !i.test)).toHaveLength(1);
    }
    const feed = await until(
      async () => {
        const items = (await t.as(acme.apiKey, 'get', '/v1/callbacks/feed?limit=1000').expect(200)).body.items as {
          test: boolean;
          message: number;
        }[];
        return items.length > 0 ? items : null;
      },
      { what: 'the real callback in the feed' },
    );
    expect(feed.map((i) => [i.test, i.message])).toEqual([[false, 0]]);
  });

  it('at most 10 accepted per partner per rolling minute: the 11th is 429 with Retry-After, and records nothing', async () => {
    const p = await createPartner(t, 'Busy Bank');
    const company = (
      await t.as(p.apiKey, 'post', '/v1/companies', { name: 'Busy', status_callback: rx.url('/busy') }).expect(201)
    ).body.id;
    const results = await Promise.all(
      Array.from({ length: 12 }, () => t.as(p.apiKey, 'post', '/v1/callbacks/test', { companyId: company })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([...Array(10).fill(202), 429, 429]);
    const limited = results.find((r) => r.status === 429)!;
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(limited.body.message).toMatch(/At most 10 test callbacks per minute/);
    expect((await t.sql('SELECT 1 FROM callbacks WHERE partner_id = $1', [p.id])).length).toBe(10);
    // Another partner is not limited by it.
    await t.as(acme.apiKey, 'post', '/v1/callbacks/test', { companyId: c }).expect(202);
  });

  describe('hostile input: a clear 4xx, nothing recorded', () => {
    let theirs: string;
    beforeAll(async () => {
      theirs = (
        await t
          .as(other.apiKey, 'post', '/v1/companies', { name: 'Theirs', status_callback: rx.url('/theirs') })
          .expect(201)
      ).body.id;
    });
    it.each<[string, () => object, number, RegExp]>([
      ["another partner's company", () => ({ companyId: theirs }), 404, /Company not found/],
      ['an unknown company', () => ({ companyId: '00000000-0000-4000-8000-000000000000' }), 404, /Company not found/],
      ['no companyId', () => ({}), 400, /companyId must be a UUID/],
      ['a malformed companyId', () => ({ companyId: 'x' }), 400, /companyId must be a UUID/],
      ['message 5', () => ({ companyId: c, message: 5 }), 400, /message must not be greater than 4/],
      ['message -1', () => ({ companyId: c, message: -1 }), 400, /message must not be less than 0/],
      ['message as a string', () => ({ companyId: c, message: '1' }), 400, /message must be an integer/],
      ['a url with user-info', () => ({ companyId: c, url: 'http://u:p@127.0.0.1:9/' }), 400, /url .*user information/],
      ['a url that is not one', () => ({ companyId: c, url: 'not a url' }), 400, /url /],
      ['another property', () => ({ companyId: c, body: '{}' }), 400, /property body should not exist/],
      ['url null', () => ({ companyId: c, url: null }), 400, /url must be a string/],
      ['message null', () => ({ companyId: c, message: null }), 400, /message must be an integer/],
    ])('%s', async (_what, body, status, message) => {
      const [{ n: before }] = await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM callbacks');
      const res = await t.as(acme.apiKey, 'post', '/v1/callbacks/test', body()).expect(status);
      expect(JSON.stringify(res.body.message)).toMatch(message);
      const [{ n: after }] = await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM callbacks');
      expect(after).toBe(before);
    });
  });
});
