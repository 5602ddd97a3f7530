import { Receiver } from './support/receiver.js';
import { createPartner, harness, Partner, TestApp, until } from './support/harness.js';

interface Row {
  id: string;
  status: string;
  url: string;
  last_error: string | null;
  url_removed_at: Date | null;
}

/**
 * Changing a callback URL (PATCH of a company, a limit request, a withdrawal request): what
 * happens to the callbacks waiting for the old URL, to failed and in-flight ones, and to the
 * destination bookkeeping; and that every hostile input is a 4xx that changes nothing.
 */
describe('moving and removing callback URLs', () => {
  let t: TestApp;
  let acme: Partner;
  let other: Partner;
  let old: Receiver;
  let moved: Receiver;
  /** Requests the old receiver holds unanswered until the test lets them go. */
  const held: (() => void)[] = [];
  let holdOld = false;

  // `url`: where each callback's next attempt goes. One being attempted when its URL moved keeps its
  // URL until the attempt settles, the new one waiting in next_url (the in-flight test reads both).
  const rows = (companyId: string) =>
    t.sql<Row>(
      'SELECT id, status, coalesce(next_url, url) AS url, last_error, url_removed_at FROM callbacks WHERE company_id = $1 AND NOT test ORDER BY seq',
      [companyId],
    );
  const attempts = (id: string) =>
    t.sql<{ status_code: number | null }>(
      'SELECT status_code FROM callback_attempts WHERE callback_id = $1 ORDER BY number',
      [id],
    );

  beforeAll(async () => {
    old = await Receiver.start();
    old.answer = (_h, _req, res) => {
      const answer = () => res.writeHead(503, { 'retry-after': '1' }).end('down for maintenance');
      if (holdOld) held.push(answer);
      else answer();
    };
    moved = await Receiver.start();
  });
  // Answers still held are given before the app closes (hooks run in the order declared).
  afterAll(() => held.forEach((answer) => answer()));
  // Retries a second apart; a circuit that does not open before the test moves the URL.
  const e2e = harness({ CALLBACK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1s,1s,1s,1s,1s', CALLBACK_BREAKER_THRESHOLD: '1000' });
  beforeAll(async () => {
    ({ t, p: acme } = e2e);
    other = await createPartner(t, 'Other Bank');
  });
  afterAll(async () => {
    await old?.close();
    await moved?.close();
  });

  async function companyAt(p: Partner, url: string | null) {
    const res = await t
      .as(p.apiKey, 'post', '/v1/companies', { name: 'Acme Trading', ...(url ? { status_callback: url } : {}) })
      .expect(201);
    return res.body.id as string;
  }
  const termsChange = (c: string, days: number) =>
    t.admin('patch', `/admin/v1/companies/${c}/credit`, { repaymentTermDays: days }).expect(200);

  it('callbacks waiting on a 503 receiver arrive at the new URL with their webhook-id; the new destination is known', async () => {
    const c = await companyAt(acme, old.url('/old/company'));
    await termsChange(c, 31);
    await termsChange(c, 32);
    const waiting = await rows(c);
    expect(waiting).toHaveLength(2);
    await until(async () => (await Promise.all(waiting.map((w) => attempts(w.id)))).every((a) => a.length >= 1), {
      what: 'a 503 for each',
    });

    const res = await t
      .as(acme.apiKey, 'patch', `/v1/companies/${c}`, { status_callback: moved.url('/new/company') })
      .expect(200);
    expect(res.body).toMatchObject({ id: c, status_callback: moved.url('/new/company') });
    expect((await rows(c)).map((r) => r.url)).toEqual([moved.url('/new/company'), moved.url('/new/company')]);
    // The new origin is a destination (admission finds it; the partner's list shows it).
    const known = await t.sql('SELECT 1 FROM destinations WHERE origin = $1', [`http://127.0.0.1:${moved.port}`]);
    expect(known).toHaveLength(1);
    const listed = (await t.as(acme.apiKey, 'get', '/v1/callbacks/destinations').expect(200)).body.items as {
      origin: string;
    }[];
    expect(listed.map((d) => d.origin)).toContain(`http://127.0.0.1:${moved.port}`);

    await until(async () => (await rows(c)).every((r) => r.status === 'delivered'), {
      timeoutMs: 20_000,
      what: 'both delivered at the new URL',
    });
    const arrived = moved.on('/new/company').map((h) => h.headers['webhook-id']);
    expect(arrived.sort()).toEqual(waiting.map((w) => w.id).sort());
    // A change after the move goes to the new URL from the start.
    await termsChange(c, 33);
    await until(() => moved.on('/new/company').length === 3, { what: 'the next callback at the new URL' });
  });

  it('an attempt under way when the URL changes finishes against the old URL; the retry goes to the new one', async () => {
    const c = await companyAt(acme, old.url('/old/inflight'));
    holdOld = true;
    await termsChange(c, 40);
    await until(() => held.length === 1, { what: 'the attempt held at the old receiver' });
    await t.as(acme.apiKey, 'patch', `/v1/companies/${c}`, { status_callback: moved.url('/new/inflight') }).expect(200);
    // Until it settles, it is in flight at the old destination and only there: its window and
    // circuit are the old one's; the new URL waits for its next attempt.
    const [inFlight] = await t.sql<{ status: string; url: string; next_url: string }>(
      'SELECT status, url, next_url FROM callbacks WHERE company_id = $1',
      [c],
    );
    expect(inFlight).toEqual({
      status: 'sending',
      url: old.url('/old/inflight'),
      next_url: moved.url('/new/inflight'),
    });
    const origins = (await t.as(acme.apiKey, 'get', '/v1/callbacks/destinations').expect(200)).body.items as {
      origin: string;
      inFlight: number;
    }[];
    expect(origins.find((d) => d.origin === `http://127.0.0.1:${old.port}`)?.inFlight).toBe(1);
    expect(origins.find((d) => d.origin === `http://127.0.0.1:${moved.port}`)?.inFlight ?? 0).toBe(0);
    holdOld = false;
    held.splice(0).forEach((answer) => answer());
    const [cb] = await rows(c);
    await until(async () => (await rows(c))[0].status === 'delivered', {
      timeoutMs: 20_000,
      what: 'the retry delivered at the new URL',
    });
    expect((await attempts(cb.id)).map((a) => a.status_code)).toEqual([503, 204]);
    expect(old.on('/old/inflight')).toHaveLength(1);
    expect(moved.on('/new/inflight').map((h) => h.headers['webhook-id'])).toEqual([cb.id]);
  });

  it('null removes the URL: waiting callbacks fail saying so, cannot be redelivered, and nothing more is recorded; a new URL makes them redeliverable', async () => {
    const c = await companyAt(acme, null);
    const lr = (
      await t
        .as(acme.apiKey, 'post', `/v1/companies/${c}/limit-requests`, {
          amount: '1000',
          status_callback: old.url('/old/limit'),
        })
        .expect(201)
    ).body.id;
    await t.admin('post', `/admin/v1/limit-requests/${lr}/approve`).expect(200);
    const [cb] = await rows(c);
    await until(async () => (await attempts(cb.id)).length >= 1, { what: 'a first 503' });

    const res = await t
      .as(acme.apiKey, 'patch', `/v1/companies/${c}/limit-requests/${lr}`, { status_callback: null })
      .expect(200);
    expect(res.body).toMatchObject({ id: lr, status_callback: null, status: 'approved' });
    const [failed] = await rows(c);
    expect(failed).toMatchObject({ status: 'failed', url: old.url('/old/limit') });
    expect(failed.last_error).toMatch(/callback URL removed by the partner \(status_callback set to null\)/);
    const view = (await t.as(acme.apiKey, 'get', `/v1/callbacks/${cb.id}`).expect(200)).body;
    expect(view).toMatchObject({ status: 'failed', nextAttemptAt: null, test: false });
    const refused = await t.as(acme.apiKey, 'post', `/v1/callbacks/${cb.id}/redeliver`).expect(409);
    expect(refused.body.message).toMatch(/URL was removed/);
    await t.admin('post', `/admin/v1/callbacks/${cb.id}/redeliver`).expect(409);
    expect(
      (await t.admin('post', '/admin/v1/callbacks/redeliver', { status: 'failed', companyId: c }).expect(202)).body
        .count,
    ).toBe(0);

    // A URL again: the failed callback goes there when redelivered.
    await t
      .as(acme.apiKey, 'patch', `/v1/companies/${c}/limit-requests/${lr}`, { status_callback: moved.url('/new/limit') })
      .expect(200);
    expect((await rows(c))[0]).toMatchObject({ status: 'failed', url: moved.url('/new/limit'), url_removed_at: null });
    await t.as(acme.apiKey, 'post', `/v1/callbacks/${cb.id}/redeliver`).expect(202);
    await until(async () => (await rows(c))[0].status === 'delivered', { what: 'the redelivery at the new URL' });
    expect(moved.on('/new/limit').map((h) => h.headers['webhook-id'])).toEqual([cb.id]);
  });

  it('an attempt under way when the URL is removed that is answered 2xx is recorded as delivered', async () => {
    const c = await companyAt(acme, moved.url('/slow'));
    let release: () => void = () => undefined;
    const answered = moved.answer;
    moved.answer = (h, req, res) =>
      h.path === '/slow' ? (release = () => res.writeHead(204).end()) : answered(h, req, res);
    await termsChange(c, 50);
    await until(() => moved.on('/slow').length === 1, { what: 'the attempt under way' });
    await t.as(acme.apiKey, 'patch', `/v1/companies/${c}`, { status_callback: null }).expect(200);
    // Still in flight at its destination until the attempt settles (the API shows it pending).
    expect((await rows(c))[0].status).toBe('sending');
    release();
    moved.answer = answered;
    await until(async () => (await rows(c))[0].status === 'delivered', { what: 'the delivery recorded' });
  });

  it('an attempt under way when the URL is removed that fails: failed when it settles, saying the URL was removed, no further attempt', async () => {
    const c = await companyAt(acme, old.url('/old/removed'));
    holdOld = true;
    await termsChange(c, 60);
    await until(() => held.length === 1, { what: 'the attempt held at the old receiver' });
    await t.as(acme.apiKey, 'patch', `/v1/companies/${c}`, { status_callback: null }).expect(200);
    const [cb] = await rows(c);
    expect(cb.status).toBe('sending');
    expect((await t.as(acme.apiKey, 'get', `/v1/callbacks/${cb.id}`).expect(200)).body.status).toBe('pending');
    holdOld = false;
    held.splice(0).forEach((answer) => answer());
    await until(async () => (await rows(c))[0].status === 'failed', { what: 'failed once the attempt settled' });
    const [failed] = await rows(c);
    expect(failed.last_error).toMatch(
      /^callback URL removed by the partner \(status_callback set to null\); no further attempts$/,
    );
    expect((await attempts(cb.id)).map((a) => a.status_code)).toEqual([503]);
    await t.as(acme.apiKey, 'post', `/v1/callbacks/${cb.id}/redeliver`).expect(409);
  });

  it("withdrawal requests: both properties, each moving only its own message's callbacks; the other variant's path is 404", async () => {
    const c = await companyAt(acme, null);
    const lr = (await t.as(acme.apiKey, 'post', `/v1/companies/${c}/limit-requests`, { amount: '1000' }).expect(201))
      .body.id;
    await t.admin('post', `/admin/v1/limit-requests/${lr}/approve`).expect(200);
    const w = (
      await t
        .as(acme.apiKey, 'post', `/v1/companies/${c}/withdrawal`, {
          amount: '100',
          status_callback: old.url('/old/w'),
          loan_status_callback: old.url('/old/loan'),
        })
        .expect(201)
    ).body.id;
    await t.admin('post', `/admin/v1/withdrawal-requests/${w}/accept`).expect(200);
    const loan = (await t.admin('post', `/admin/v1/withdrawal-requests/${w}/pay-out`).expect(200)).body.loanId;
    await t.admin('post', `/admin/v1/loans/${loan}/payments`, { amount: '10' }).expect(201);
    const before = await rows(c); // 1 (accepted), 1 (paid out), 4
    expect(before).toHaveLength(3);

    await t
      .as(acme.apiKey, 'patch', `/v1/companies/${c}/withdrawal-requests/${w}`, {
        loan_status_callback: moved.url('/x'),
      })
      .expect(404);
    const res = await t
      .as(acme.apiKey, 'patch', `/v1/companies/${c}/withdrawal/${w}`, { loan_status_callback: moved.url('/new/loan') })
      .expect(200);
    expect(res.body).toMatchObject({
      id: w,
      status_callback: old.url('/old/w'),
      loan_status_callback: moved.url('/new/loan'),
      status: 'paid_out',
    });
    expect((await rows(c)).map((r) => r.url)).toEqual([old.url('/old/w'), old.url('/old/w'), moved.url('/new/loan')]);
    await until(() => moved.on('/new/loan').length === 1, { what: 'message 4 at its new URL' });

    await t
      .as(acme.apiKey, 'patch', `/v1/companies/${c}/withdrawal/${w}`, {
        status_callback: null,
        loan_status_callback: null,
      })
      .expect(200);
    // Failed at once, or, for one in flight at the old receiver, once its attempt settles.
    await until(async () => (await rows(c)).slice(0, 2).every((r) => r.status === 'failed'), { what: 'both failed' });
    const after = await rows(c);
    expect(after.slice(0, 2).map((r) => r.status)).toEqual(['failed', 'failed']);
  });

  describe('hostile input: a clear 4xx, and nothing changed', () => {
    let c: string;
    let lr: string;
    let w: string;
    let theirs: string;
    let snapshot: () => Promise<unknown>;

    beforeAll(async () => {
      c = await companyAt(acme, moved.url('/keep'));
      lr = (
        await t
          .as(acme.apiKey, 'post', `/v1/companies/${c}/limit-requests`, {
            amount: '5',
            status_callback: moved.url('/keep-lr'),
          })
          .expect(201)
      ).body.id;
      w = (await t.as(acme.apiKey, 'post', `/v1/companies/${c}/limit-requests`, { amount: '5' }).expect(201)).body.id; // not a withdrawal
      theirs = await companyAt(other, moved.url('/theirs'));
      snapshot = async () => [
        await t.sql('SELECT id, callback_url FROM companies ORDER BY id'),
        await t.sql('SELECT id, status_callback FROM limit_requests ORDER BY id'),
        await t.sql('SELECT id, status_callback, loan_status_callback FROM withdrawal_requests ORDER BY id'),
        await t.sql('SELECT id, url, status, url_removed_at FROM callbacks ORDER BY id'),
      ];
    });

    it.each<[string, () => string, object, number, RegExp]>([
      [
        "another partner's company",
        () => `/v1/companies/${theirs}`,
        { status_callback: null },
        404,
        /Company not found/,
      ],
      [
        'a limit request of another company',
        () => `/v1/companies/${theirs}/limit-requests/${lr}`,
        { status_callback: 'http://127.0.0.1:9/x' },
        404,
        /not found/,
      ],
      [
        'a limit request id as a withdrawal',
        () => `/v1/companies/${c}/withdrawal/${w}`,
        { status_callback: null },
        404,
        /Withdrawal request not found/,
      ],
      ['a malformed id', () => `/v1/companies/not-a-uuid`, { status_callback: null }, 400, /companyId must be a UUID/],
      [
        "the other variant's property",
        () => `/v1/companies/${c}`,
        { callback: 'http://127.0.0.1:9/x' },
        400,
        /callback is not accepted by this API variant; use status_callback/,
      ],
      [
        'another property',
        () => `/v1/companies/${c}`,
        { status_callback: 'http://127.0.0.1:9/x', name: 'Renamed' },
        400,
        /property name should not exist/,
      ],
      [
        'a tracked property',
        () => `/v1/companies/${c}/limit-requests/${lr}`,
        { status_callback: 'http://127.0.0.1:9/x', amount: '9' },
        400,
        /property amount should not exist/,
      ],
      ['an empty body', () => `/v1/companies/${c}`, {}, 400, /status_callback is required/],
      [
        'an empty withdrawal body',
        () => `/v1/companies/${c}/withdrawal/${lr}`,
        {},
        400,
        /status_callback or loan_status_callback is required/,
      ],
      [
        'a number for a URL',
        () => `/v1/companies/${c}`,
        { status_callback: 5 },
        400,
        /status_callback must be a string/,
      ],
      [
        'a URL with user-info',
        () => `/v1/companies/${c}/limit-requests/${lr}`,
        { status_callback: 'http://u:p@127.0.0.1:9/x' },
        400,
        /status_callback .*user information/,
      ],
      [
        'a non-http scheme',
        () => `/v1/companies/${c}`,
        { status_callback: 'ftp://127.0.0.1/x' },
        400,
        /status_callback/,
      ],
      [
        'a URL over 2048 characters',
        () => `/v1/companies/${c}`,
        { status_callback: `http://127.0.0.1:9/${'a'.repeat(2048)}` },
        400,
        /status_callback .*2048/,
      ],
    ])('%s', async (_what, path, body, status, message) => {
      const before = await snapshot();
      const res = await t.as(acme.apiKey, 'patch', path(), body).expect(status);
      expect(JSON.stringify(res.body.message)).toMatch(message);
      expect(await snapshot()).toEqual(before);
    });
  });
});

describe('variant A: the company property is callback, withdrawals live at withdrawal-requests', () => {
  let t: TestApp;
  let p: Partner;
  const e2e = harness({ API_VARIANT: 'A', ROLE: 'api' });
  beforeAll(() => ({ t, p } = e2e));

  it('moves the company URL by callback, refuses status_callback naming callback, and serves only its own withdrawal path', async () => {
    const c = (
      await t.as(p.apiKey, 'post', '/v1/companies', { name: 'A Co', callback: 'http://127.0.0.1:9/a' }).expect(201)
    ).body.id;
    expect(
      (await t.as(p.apiKey, 'patch', `/v1/companies/${c}`, { callback: 'http://127.0.0.1:9/b' }).expect(200)).body,
    ).toMatchObject({ callback: 'http://127.0.0.1:9/b' });
    const refused = await t
      .as(p.apiKey, 'patch', `/v1/companies/${c}`, { status_callback: 'http://127.0.0.1:9/c' })
      .expect(400);
    expect(refused.body.message.join(' ')).toMatch(/status_callback is not accepted by this API variant; use callback/);
    const lr = (await t.as(p.apiKey, 'post', `/v1/companies/${c}/limit-requests`, { amount: '10' }).expect(201)).body
      .id;
    await t.admin('post', `/admin/v1/limit-requests/${lr}/approve`).expect(200);
    const w = (await t.as(p.apiKey, 'post', `/v1/companies/${c}/withdrawal-requests`, { amount: '1' }).expect(201)).body
      .id;
    await t.as(p.apiKey, 'patch', `/v1/companies/${c}/withdrawal/${w}`, { status_callback: null }).expect(404);
    expect(
      (
        await t
          .as(p.apiKey, 'patch', `/v1/companies/${c}/withdrawal-requests/${w}`, {
            status_callback: 'http://127.0.0.1:9/w',
          })
          .expect(200)
      ).body,
    ).toMatchObject({
      status_callback: 'http://127.0.0.1:9/w',
      loan_status_callback: null,
    });
    expect((await t.sql('SELECT callback_url FROM companies WHERE id = $1', [c]))[0]).toEqual({
      callback_url: 'http://127.0.0.1:9/b',
    });
  });
});
