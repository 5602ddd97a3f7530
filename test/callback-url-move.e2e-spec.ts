import { Webhook } from 'standardwebhooks';
import { Receiver, webhookHeaders } from './support/receiver.js';
import { createPartner, harness, Partner, TestApp, until } from './support/harness.js';

interface UrlItem {
  url: string;
  resources: number;
  destination: { origin: string; state: string };
  lastDeliveredAt: string | null;
}

/**
 * A partner's callback URLs as a whole (GET /v1/callback-urls, POST /v1/callback-urls/move): which
 * are in use, by how many resources, at which destination state and last delivery; and moving
 * every resource of one URL to another as its own PATCH would, waiting callbacks following.
 */
describe('callback URLs in use, and moving one', () => {
  let t: TestApp;
  let acme: Partner;
  let other: Partner;
  let rx: Receiver;
  let down: Receiver;
  let moved: Receiver;

  // Two failures open a circuit, whose probe then waits ten minutes: an open destination stays open.
  const e2e = harness({
    CALLBACK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1s',
    CALLBACK_BREAKER_THRESHOLD: '2',
    CALLBACK_BREAKER_PROBE: '10m..10m',
  });
  beforeAll(async () => {
    ({ t, rx, p: acme } = e2e);
    other = await createPartner(t, 'Other Bank');
    down = await Receiver.start();
    down.answer = (_h, _req, res) => res.writeHead(503).end('down');
    moved = await Receiver.start();
  });
  afterAll(async () => {
    await down?.close();
    await moved?.close();
  });

  const list = async (p: Partner) =>
    (await t.as(p.apiKey, 'get', '/v1/callback-urls').expect(200)).body.items as UrlItem[];
  const company = async (p: Partner, url: string) =>
    (await t.as(p.apiKey, 'post', '/v1/companies', { name: 'Acme Trading', status_callback: url }).expect(201)).body
      .id as string;
  const limitRequest = async (p: Partner, c: string, url: string) =>
    (
      await t
        .as(p.apiKey, 'post', `/v1/companies/${c}/limit-requests`, { amount: '1000', status_callback: url })
        .expect(201)
    ).body.id as string;
  const withdrawal = async (p: Partner, c: string, body: object) => {
    await t
      .admin('patch', `/admin/v1/companies/${c}/credit`, { creditLimit: '5000', creditStatus: 'active' })
      .expect(200);
    return (await t.as(p.apiKey, 'post', `/v1/companies/${c}/withdrawal`, { amount: '10', ...body }).expect(201)).body
      .id as string;
  };
  const termsChange = (c: string, days: number) =>
    t.admin('patch', `/admin/v1/companies/${c}/credit`, { repaymentTermDays: days }).expect(200);
  const move = (p: Partner, body: object) => t.as(p.apiKey, 'post', '/v1/callback-urls/move', body);
  const origin = (r: Receiver) => `http://127.0.0.1:${r.port}`;
  /** Every URL property of every resource, to see that a refused move changed nothing. */
  const allUrls = () =>
    t.sql(`SELECT id::text, callback_url AS a, NULL AS b FROM companies
           UNION ALL SELECT id::text, status_callback, NULL FROM limit_requests
           UNION ALL SELECT id::text, status_callback, loan_status_callback FROM withdrawal_requests
           UNION ALL SELECT id::text, url, next_url FROM callbacks ORDER BY 1`);

  it("lists each URL in use once: resources, destination state, last delivery; never another partner's", async () => {
    const c = await company(acme, rx.url('/list/a'));
    await limitRequest(acme, c, rx.url('/list/b'));
    await withdrawal(acme, c, { status_callback: rx.url('/list/c'), loan_status_callback: rx.url('/list/a') });
    const failing = await company(acme, down.url('/list/down'));
    const theirs = await company(other, rx.url('/list/a'));
    await limitRequest(other, theirs, rx.url('/list/theirs'));
    // The company's credit changes went to /list/a (delivered); two to the failing receiver open its circuit.
    await until(() => rx.on('/list/a').length >= 2, { what: 'the company callbacks at /list/a' });
    await termsChange(failing, 40);
    await termsChange(failing, 41);
    await until(async () => (await list(acme)).some((u) => u.destination.state === 'open'), {
      what: "the failing receiver's circuit open",
    });

    const items = await list(acme);
    const [delivered] = await t.sql<{ at: Date }>(
      `SELECT max(delivered_at) AS at FROM callbacks WHERE partner_id = $1 AND url = $2`,
      [acme.id, rx.url('/list/a')],
    );
    const ones = [
      {
        url: rx.url('/list/b'),
        resources: 1,
        destination: { origin: origin(rx), state: 'closed' },
        lastDeliveredAt: null,
      },
      {
        url: rx.url('/list/c'),
        resources: 1,
        destination: { origin: origin(rx), state: 'closed' },
        lastDeliveredAt: null,
      },
      {
        url: down.url('/list/down'),
        resources: 1,
        destination: { origin: origin(down), state: 'open' },
        lastDeliveredAt: null,
      },
    ];
    expect(items).toEqual([
      // The company and the withdrawal's loan_status_callback: two resources; then one each, by URL.
      {
        url: rx.url('/list/a'),
        resources: 2,
        destination: { origin: origin(rx), state: 'closed' },
        lastDeliveredAt: delivered.at.toISOString(),
      },
      ...ones.sort((x, y) => (x.url < y.url ? -1 : 1)),
    ]);
    // The other partner sees its own: the same URL counts its one company, and its other URL is its alone.
    expect((await list(other)).map((u) => [u.url, u.resources])).toEqual([
      [rx.url('/list/a'), 1],
      [rx.url('/list/theirs'), 1],
    ]);
    await t.as(acme.apiKey, 'get', '/v1/callback-urls?limit=5').expect(400);
  });

  it('moves every resource of a URL: waiting callbacks follow (same webhook-id), new ones too', async () => {
    const from = down.url('/move/k');
    const k1 = await company(acme, from);
    const lr = await limitRequest(acme, k1, from);
    const k2 = await company(acme, from);
    const w = await withdrawal(acme, k2, { status_callback: rx.url('/move/keep'), loan_status_callback: from });
    const kept = await company(acme, down.url('/move/other'));
    // Callbacks waiting behind the failing receiver, whose circuit is open (by the test before, or by them):
    // the credit set for the withdrawal (0, 2) and a terms change (0).
    await termsChange(k1, 50);
    const waiting = await t.sql<{ id: string; status: string }>(
      `SELECT id, status FROM callbacks WHERE url = $1 ORDER BY id`,
      [from],
    );
    expect(waiting.map((w) => w.status)).toEqual(['pending', 'pending', 'pending']);
    const open = async () => (await list(acme)).find((u) => u.url === from)?.destination.state === 'open';
    await until(open, { what: "the failing receiver's circuit open" });

    const res = await move(acme, { from, to: moved.url('/move/k') }).expect(200);
    expect(res.body).toEqual({ count: 4 });
    const urlOf = async (path: string) => (await t.as(acme.apiKey, 'get', path).expect(200)).body;
    expect((await urlOf(`/v1/companies/${k1}`)).status_callback).toBe(moved.url('/move/k'));
    expect((await urlOf(`/v1/companies/${k2}`)).status_callback).toBe(moved.url('/move/k'));
    expect((await urlOf(`/v1/companies/${k1}/limit-requests/${lr}`)).status_callback).toBe(moved.url('/move/k'));
    expect(await urlOf(`/v1/companies/${k2}/withdrawal/${w}`)).toMatchObject({
      status_callback: rx.url('/move/keep'),
      loan_status_callback: moved.url('/move/k'),
    });
    expect((await urlOf(`/v1/companies/${kept}`)).status_callback).toBe(down.url('/move/other'));

    // The waiting callbacks leave the open circuit behind at once: the new URL is another destination.
    const arrived = () =>
      moved
        .on('/move/k')
        .map((h) => String(h.headers['webhook-id']))
        .sort();
    await until(() => arrived().length >= waiting.length, { what: 'the waiting callbacks at the new URL' });
    expect(arrived()).toEqual(waiting.map((w) => w.id));
    for (const hit of moved.on('/move/k'))
      expect(() => new Webhook(acme.signingSecret).verify(hit.body, webhookHeaders(hit.headers))).not.toThrow();
    await termsChange(k2, 51);
    await until(() => moved.on('/move/k').length === waiting.length + 1, { what: 'the next callback at the new URL' });
    expect(down.on('/move/k')).toEqual([]);
    const listed = await list(acme);
    expect(listed.find((u) => u.url === moved.url('/move/k'))?.resources).toBe(4);
    expect(listed.find((u) => u.url === from)).toBeUndefined();
  });

  it("refuses a from not in use (404, another's too), a bad to or from itself (400): nothing changes", async () => {
    await company(other, rx.url('/refuse/theirs'));
    const mine = await company(acme, rx.url('/refuse/mine'));
    const before = await allUrls();
    const unknown = await move(acme, { from: rx.url('/refuse/nobody'), to: moved.url('/x') }).expect(404);
    expect(unknown.body.code).toBe('not_found');
    await move(acme, { from: rx.url('/refuse/theirs'), to: moved.url('/x') }).expect(404);
    for (const to of ['ftp://example.com/x', 'not a url', `https://x.example/${'a'.repeat(2050)}`]) {
      const bad = await move(acme, { from: rx.url('/refuse/mine'), to }).expect(400);
      expect(bad.body.message.join(' ')).toMatch(/^to /);
    }
    const same = await move(acme, { from: rx.url('/refuse/mine'), to: rx.url('/refuse/mine') }).expect(400);
    expect(same.body.message.join(' ')).toMatch(/^to is the URL given as from/);
    for (const body of [
      { from: rx.url('/refuse/mine') },
      { to: moved.url('/x') },
      { from: 1, to: moved.url('/x') },
      { from: rx.url('/refuse/mine'), to: moved.url('/x'), extra: 1 },
    ]) {
      await move(acme, body).expect(400);
    }
    expect(await allUrls()).toEqual(before);
    expect((await t.as(acme.apiKey, 'get', `/v1/companies/${mine}`).expect(200)).body.status_callback).toBe(
      rx.url('/refuse/mine'),
    );
  });

  it('finds from as URLs are stored; answers a retry with its Idempotency-Key as the first time', async () => {
    const c = await company(acme, rx.url('/retry/a'));
    const from = `HTTP://127.0.0.1:${rx.port}/retry/./a`;
    const first = await move(acme, { from, to: moved.url('/retry/b') })
      .set('Idempotency-Key', 'move-1')
      .expect(200);
    expect(first.body).toEqual({ count: 1 });
    const again = await move(acme, { from, to: moved.url('/retry/b') })
      .set('Idempotency-Key', 'move-1')
      .expect(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
    await move(acme, { from, to: moved.url('/retry/b') }).expect(404);
    expect((await t.as(acme.apiKey, 'get', `/v1/companies/${c}`).expect(200)).body.status_callback).toBe(
      moved.url('/retry/b'),
    );
  });

  it('queues with concurrent PATCHes (company first): no deadlock, companies and callbacks agree', async () => {
    const from = down.url('/race/a');
    const companies = await Promise.all(Array.from({ length: 12 }, () => company(acme, from)));
    for (const [i, c] of companies.entries()) await termsChange(c, 60 + i);
    const patches = companies.map((c) =>
      t.as(acme.apiKey, 'patch', `/v1/companies/${c}`, { status_callback: rx.url(`/race/${c}`) }),
    );
    const [moving, ...patched] = await Promise.all([move(acme, { from, to: moved.url('/race/b') }), ...patches]);
    expect(patched.map((r) => r.status)).toEqual(companies.map(() => 200));
    // The move took those no PATCH had changed before it, or none (every PATCH went first); a PATCH after it wins.
    if (moving.status === 200) expect(moving.body.count).toBeLessThanOrEqual(companies.length);
    else expect([moving.status, moving.body.message]).toEqual([404, 'Callback URL not found']);
    for (const c of companies) {
      const [row] = await t.sql<{ url: string }>('SELECT callback_url AS url FROM companies WHERE id = $1', [c]);
      expect([moved.url('/race/b'), rx.url(`/race/${c}`)]).toContain(row.url);
      const waiting = await t.sql<{ url: string }>(
        `SELECT coalesce(next_url, url) AS url FROM callbacks WHERE company_id = $1 AND status <> 'delivered'`,
        [c],
      );
      for (const w of waiting) expect(w.url).toBe(row.url);
    }
  });
});

// Production rules: https only, no private destination (nothing connects anywhere).
describe('moving a callback URL under the production rules', () => {
  let t: TestApp;
  let p: Partner;
  const e2e = harness({ ROLE: 'api', CALLBACK_ALLOW_HTTP: 'false', CALLBACK_ALLOW_PRIVATE_TARGETS: 'false' });
  beforeAll(() => ({ t, p } = e2e));

  it('refuses a to at a private, loopback or metadata address (400 naming to), changing nothing', async () => {
    const c = (
      await t
        .as(p.apiKey, 'post', '/v1/companies', { name: 'X', status_callback: 'https://93.184.215.14/cb' })
        .expect(201)
    ).body.id;
    for (const [to, why] of [
      ['https://10.0.0.1/cb', 'private'],
      ['https://127.0.0.1/cb', 'loopback'],
      ['https://169.254.169.254/x', 'link-local'],
      ['http://93.184.215.14/cb', 'https'],
    ]) {
      const res = await t
        .as(p.apiKey, 'post', '/v1/callback-urls/move', { from: 'https://93.184.215.14/cb', to })
        .expect(400);
      expect(res.body.message.join(' ')).toMatch(new RegExp(`^to .*${why}`));
    }
    expect((await t.as(p.apiKey, 'get', `/v1/companies/${c}`).expect(200)).body.status_callback).toBe(
      'https://93.184.215.14/cb',
    );
  });

  it('refuses a move of more resources than its limit (422 url_move_over_limit), moving none', async () => {
    const from = 'https://93.184.215.14/many';
    await t.sql(
      `INSERT INTO companies (partner_id, name, currency, credit_status, callback_url)
       SELECT $1, 'm', 'EUR', 'pending', $2 FROM generate_series(1, 10001)`,
      [p.id, from],
    );
    const res = await t
      .as(p.apiKey, 'post', '/v1/callback-urls/move', { from, to: 'https://93.184.215.14/other' })
      .expect(422);
    expect(res.body.code).toBe('url_move_over_limit');
    expect(res.body.message).toContain('10,000');
    const [{ n }] = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM companies WHERE callback_url = $1`, [
      from,
    ]);
    expect(n).toBe(10001);
  });
});
