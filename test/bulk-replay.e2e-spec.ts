/**
 * Redelivery, one rule for partners and operators (a pending callback attempted now), and bulk
 * replay after an outage (POST /v1/callbacks/redeliver and its operator's twin): the window, the
 * origin, the partner's own callbacks only, never a test callback, and the bound.
 */
import { Client } from 'pg';
import { DEFAULT_REPLAY_LIMIT, REPLAY_LIMIT } from '../src/callbacks/bulk-replay.js';
import { replayStatement } from '../src/callbacks/store/statements.js';
import { Receiver } from './support/receiver.js';
import { companyWithCallback, createPartner, harness, Partner, TestApp, until } from './support/harness.js';

/** The bound, lowered for this file (100,000 in the service): one replay may take 3, not 4. */
const LIMIT = 3;

describe('bulk replay of failed callbacks', () => {
  const e2e = harness(
    { CALLBACK_RETRY_SCHEDULE: '1h' },
    { configure: (b) => b.overrideProvider(REPLAY_LIMIT).useValue(LIMIT) },
  );
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;
  let other: Receiver;
  let theirs: Partner;
  /** Receivers answer 410 (failed at once, the circuit left closed) until `up`. */
  let up = false;
  const ids: Record<'jan1' | 'jan2' | 'jan3' | 'elsewhere' | 'theirs' | 'test', string> = {} as never;

  const statusOf = async (id: string) =>
    (await t.sql<{ status: string }>('SELECT status FROM callbacks WHERE id = $1', [id]))[0].status;
  const hitsOf = (r: Receiver, id: string) => r.hits.filter((h) => h.headers['webhook-id'] === id).length;
  const replay = (who: Partner, body: object) => t.as(who.apiKey, 'post', '/v1/callbacks/redeliver', body);
  const origin = (r: Receiver) => `http://127.0.0.1:${r.port}`;

  beforeAll(async () => {
    ({ t, p, rx } = e2e);
    other = await Receiver.start();
    for (const r of [rx, other]) r.answer = (_h, _req, res) => res.writeHead(up ? 204 : 410).end();
    theirs = await createPartner(t, 'Other Bank');
    const mine = await companyWithCallback(t, p, rx.url('/gone'));
    const mineElsewhere = await companyWithCallback(t, p, other.url('/gone'));
    const theirCompany = await companyWithCallback(t, theirs, rx.url('/gone'));
    ids.jan1 = await mine.change();
    ids.jan2 = await mine.change();
    ids.jan3 = await mine.change();
    ids.elsewhere = await mineElsewhere.change();
    ids.theirs = await theirCompany.change();
    ids.test = (await t.as(p.apiKey, 'post', '/v1/callbacks/test', { companyId: mine.c }).expect(202)).body.id;
    for (const id of Object.values(ids))
      await until(async () => (await statusOf(id)) === 'failed', { what: `${id} failed` });
    // Creation times the windows below cut between.
    const created: [string, string][] = [
      [ids.jan1, '2026-01-01T00:00:00Z'],
      [ids.jan2, '2026-01-02T00:00:00Z'],
      [ids.jan3, '2026-01-03T00:00:00Z'],
      [ids.elsewhere, '2026-01-02T00:00:00Z'],
      [ids.theirs, '2026-01-02T00:00:00Z'],
      [ids.test, '2026-01-02T00:00:00Z'],
    ];
    for (const [id, at] of created) await t.sql('UPDATE callbacks SET created_at = $2 WHERE id = $1', [id, at]);
    up = true;
  });
  afterAll(() => other?.close());

  it.each([
    [{ status: 'delivered' }, 'status must be one of the following values: failed'],
    [{}, 'status must be one of the following values: failed'],
    [{ status: 'failed', since: 'yesterday' }, 'since must be a valid ISO 8601 date string'],
    [{ status: 'failed', until: '2026-13-01' }, 'until must be a valid ISO 8601 date string'],
    [
      { status: 'failed', since: '2026-01-02T00:00:00Z', until: '2026-01-02T00:00:00Z' },
      'until must be later than since',
    ],
    [
      { status: 'failed', destination: 'https://hooks.example.com/path' },
      "destination must be a callback URL's origin",
    ],
    [{ status: 'failed', destination: 7 }, 'destination must be a string'],
    [{ status: 'failed', partnerId: '00000000-0000-4000-8000-000000000000' }, 'property partnerId should not exist'],
  ])('refuses %j with 400 naming the field, replaying nothing', async (body, message) => {
    const res = await replay(p, body).expect(400);
    expect(res.body).toMatchObject({
      code: 'invalid_request',
      message: expect.arrayContaining([expect.stringContaining(message)]),
    });
    for (const id of Object.values(ids)) expect(await statusOf(id)).toBe('failed');
  });

  it('replays the window [since, until) at one origin only, with the same webhook-id', async () => {
    const res = await replay(p, {
      status: 'failed',
      since: '2026-01-02T00:00:00Z',
      until: '2026-01-03T00:00:00Z',
      destination: origin(rx).replace('http', 'HTTP'),
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ count: 1 });
    await until(() => hitsOf(rx, ids.jan2) === 2, { what: 'jan2 sent again' });
    await until(async () => (await statusOf(ids.jan2)) === 'delivered', { what: 'jan2 delivered' });
    // Before since, at until, at another origin, another partner's, a test callback: untouched.
    for (const id of [ids.jan1, ids.jan3, ids.elsewhere, ids.theirs, ids.test])
      expect(await statusOf(id)).toBe('failed');
    expect([
      hitsOf(rx, ids.jan1),
      hitsOf(rx, ids.jan3),
      hitsOf(other, ids.elsewhere),
      hitsOf(rx, ids.theirs),
      hitsOf(rx, ids.test),
    ]).toEqual([1, 1, 1, 1, 1]);
  });

  it("replays every failed callback of the partner's (as many as the bound), none of another partner's, no test callback", async () => {
    expect((await replay(p, { status: 'failed' }).expect(202)).body).toEqual({ count: 3 });
    await until(() => hitsOf(rx, ids.jan1) === 2 && hitsOf(rx, ids.jan3) === 2 && hitsOf(other, ids.elsewhere) === 2, {
      what: 'the three sent again',
    });
    for (const id of [ids.jan1, ids.jan3, ids.elsewhere])
      await until(async () => (await statusOf(id)) === 'delivered', { what: `${id} delivered` });
    expect([await statusOf(ids.theirs), await statusOf(ids.test)]).toEqual(['failed', 'failed']);
    expect([hitsOf(rx, ids.theirs), hitsOf(rx, ids.test)]).toEqual([1, 1]);
    expect((await replay(p, { status: 'failed' }).expect(202)).body).toEqual({ count: 0 });
  });

  it('over the bound: 422 replay_over_limit and nothing done, on both routes; narrowed, it goes', async () => {
    const company = (
      await t.sql<{ company_id: string }>('SELECT company_id FROM callbacks WHERE id = $1', [ids.theirs])
    )[0].company_id;
    const extra = await t.sql<{ id: string }>(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, last_error, created_at)
       SELECT $1, $2, 0, $3, (SELECT body FROM callbacks WHERE id = $4), 'failed', 'HTTP 410', '2026-02-01'::timestamptz + n * interval '1 minute' FROM generate_series(1, ${LIMIT}) n RETURNING id`,
      [theirs.id, company, rx.url('/gone'), ids.theirs],
    );
    const failedOfTheirs = async () =>
      (
        await t.sql<{ n: number }>(
          `SELECT count(*)::int AS n FROM callbacks WHERE partner_id = $1 AND status = 'failed'`,
          [theirs.id],
        )
      )[0].n;
    expect(await failedOfTheirs()).toBe(LIMIT + 1);
    const refused = (await replay(theirs, { status: 'failed' }).expect(422)).body;
    expect(refused).toMatchObject({
      code: 'replay_over_limit',
      message: expect.stringContaining(`More than ${LIMIT} failed callbacks match`),
    });
    const asOperator = (
      await t.admin('post', '/admin/v1/callbacks/redeliver', { status: 'failed', partnerId: theirs.id }).expect(422)
    ).body;
    expect(asOperator.code).toBe('replay_over_limit');
    expect(await failedOfTheirs()).toBe(LIMIT + 1);
    expect(await t.sql(`SELECT 1 FROM audit_entries WHERE action = 'callback.redeliver-failed'`)).toEqual([]);

    // The operator narrows it to February (until excluded): the inserted ones, audited with the filters.
    const body = {
      status: 'failed',
      partnerId: theirs.id,
      since: '2026-02-01T00:00:00Z',
      until: '2026-03-01T00:00:00Z',
      destination: origin(rx),
    };
    expect((await t.admin('post', '/admin/v1/callbacks/redeliver', body).expect(202)).body).toEqual({ count: LIMIT });
    for (const { id } of extra)
      await until(async () => (await statusOf(id)) === 'delivered', { what: `${id} delivered` });
    expect(await statusOf(ids.theirs)).toBe('failed');
    const [entry] = await t.sql<{ after: object }>(
      `SELECT after FROM audit_entries WHERE action = 'callback.redeliver-failed'`,
    );
    expect(entry.after).toEqual({
      status: 'pending',
      count: LIMIT,
      since: '2026-02-01T00:00:00.000Z',
      until: '2026-03-01T00:00:00.000Z',
      partnerId: theirs.id,
      companyId: null,
      destination: origin(rx),
    });
  });

  it("an operator's redelivery of a pending callback in an hour-long backoff attempts it at once, audited", async () => {
    const later = await Receiver.start();
    try {
      let answering = false;
      later.answer = (_h, _req, res) => res.writeHead(answering ? 204 : 500).end();
      const id = await (await companyWithCallback(t, p, later.url('/later'))).change();
      const waiting = await until(
        async () => {
          const c = (await t.admin('get', `/admin/v1/callbacks/${id}`).expect(200)).body;
          return c.attemptCount === 1 && c.status === 'pending' ? c : null;
        },
        { what: 'a first attempt, then a retry an hour away' },
      );
      expect(Date.parse(waiting.nextAttemptAt)).toBeGreaterThan(Date.now() + 40 * 60_000);
      answering = true;
      const asked = Date.now();
      await t.admin('post', `/admin/v1/callbacks/${id}/redeliver`).expect(202);
      const hits = await until(() => (later.hits.length === 2 ? later.hits : null), { what: 'the attempt made now' });
      expect(hits[1].at - asked).toBeLessThan(10_000);
      expect(hits.map((h) => h.headers['webhook-id'])).toEqual([id, id]);
      await until(async () => (await statusOf(id)) === 'delivered', { what: 'delivered' });
      const entries = await t.sql<{ before: object; after: object }>(
        `SELECT before, after FROM audit_entries WHERE action = 'callback.redeliver' AND target_id = $1`,
        [id],
      );
      expect(entries).toEqual([
        { before: { nextAttemptAt: waiting.nextAttemptAt }, after: { nextAttemptAt: expect.any(String) } },
      ]);
    } finally {
      await later.close();
    }
  });

  it("lists an operator's callbacks by partner and by destination origin", async () => {
    const list = async (q: string) =>
      ((await t.admin('get', `/admin/v1/callbacks?${q}`).expect(200)).body.items as { id: string }[]).map((i) => i.id);
    expect(await list(`partnerId=${p.id}&destination=${encodeURIComponent(origin(other))}`)).toEqual([ids.elsewhere]);
    expect((await list(`partnerId=${theirs.id}`)).length).toBe(LIMIT + 1);
    expect(await list(`partnerId=${p.id}&destination=${encodeURIComponent(origin(rx))}&status=failed`)).toEqual([
      ids.test,
    ]);
    const refused = (await t.admin('get', '/admin/v1/callbacks?destination=https://x.example/path').expect(400)).body;
    expect(refused.message).toEqual([expect.stringContaining("destination must be a callback URL's origin")]);
  });
});

describe('bulk replay at the real bound, on a large table', () => {
  const e2e = harness();
  let t: TestApp;
  let p: Partner;

  beforeAll(async () => {
    ({ t, p } = e2e);
    const company = (await t.as(p.apiKey, 'post', '/v1/companies', { name: 'Many' }).expect(201)).body.id as string;
    const crowd = await createPartner(t, 'Crowd Bank');
    // DEFAULT_REPLAY_LIMIT + 1 failed callbacks of the partner's, one a minute; as many of another partner's.
    await t.sql(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, last_error, created_at)
       SELECT CASE WHEN g % 2 = 0 THEN $1::uuid ELSE $2::uuid END, $3::uuid, 0, 'http://127.0.0.1:9/many',
              '{"message":0,"withdrawalId":null,"companyId":"' || $3::text || '","limitRequestId":null,"loanId":null}', 'failed', 'HTTP 410',
              '2026-01-01'::timestamptz + (g / 2) * interval '1 minute'
         FROM generate_series(0, 2 * ${DEFAULT_REPLAY_LIMIT} + 1) g`,
      [p.id, crowd.id, company],
    );
    await t.sql('ANALYZE callbacks');
  }, 120_000);

  const failedOf = async (partnerId: string) =>
    (
      await t.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM callbacks WHERE partner_id = $1 AND status = 'failed'`,
        [partnerId],
      )
    )[0].n;

  it('over 100,000: 422 and nothing done; a window within it goes', async () => {
    expect(await failedOf(p.id)).toBe(DEFAULT_REPLAY_LIMIT + 1);
    expect((await t.as(p.apiKey, 'post', '/v1/callbacks/redeliver', { status: 'failed' }).expect(422)).body.code).toBe(
      'replay_over_limit',
    );
    expect(await failedOf(p.id)).toBe(DEFAULT_REPLAY_LIMIT + 1);
    const window = { status: 'failed', since: '2026-01-01T00:00:00Z', until: '2026-01-01T00:10:00Z' };
    expect((await t.as(p.apiKey, 'post', '/v1/callbacks/redeliver', window).expect(202)).body).toEqual({ count: 10 });
  }, 60_000);

  it("reads one partner's window as one range of callbacks_failed_idx", async () => {
    const pg = new Client({ connectionString: t.config.databaseUrl });
    await pg.connect();
    try {
      const { text, params } = replayStatement(
        {
          partnerId: p.id,
          since: new Date('2026-02-01T00:00:00Z'),
          until: new Date('2026-02-02T00:00:00Z'),
          origin: 'http://127.0.0.1:9',
        },
        DEFAULT_REPLAY_LIMIT,
      );
      const { rows } = await pg.query(`EXPLAIN ${text}`, params);
      const plan = rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n');
      // An index scan or a bitmap of one: either way one range, partner and window in its condition.
      expect(plan).toMatch(
        /(Bitmap Index Scan on|Index Scan using) callbacks_failed_idx[^\n]*\n\s*Index Cond: \(\(partner_id = [^\n]*created_at >= [^\n]*created_at < /,
      );
      expect(plan).not.toMatch(
        /Seq Scan on callbacks|Scan (on|using) (?!callbacks_failed_idx|callbacks_pkey)\w+ on callbacks/,
      );
    } finally {
      await pg.end();
    }
  });
});
