import { Client } from 'pg';
import { createPartner, harness, Partner, TestApp, until } from './support/harness.js';

interface Item {
  id: string;
  position: string;
  test: boolean;
  companyId: string;
}

/**
 * GET /v1/callbacks/feed: a reader passing `next` sees every callback exactly once, in ascending
 * positions, while writers commit, including transactions that commit in another order than they
 * took their ids; and a page is one index range whatever the table's size.
 */
describe('the callback feed', () => {
  let t: TestApp;
  let acme: Partner;
  let other: Partner;
  let dbUrl: string;

  const page = async (p: Partner, after: string | null, limit: number) =>
    (
      await t
        .as(p.apiKey, 'get', `/v1/callbacks/feed?limit=${limit}${after === null ? '' : `&after=${after}`}`)
        .expect(200)
    ).body as { items: Item[]; next: string };
  const company = async (p: Partner) =>
    (
      await t
        .as(p.apiKey, 'post', '/v1/companies', { name: 'F', status_callback: 'http://127.0.0.1:9/feed' })
        .expect(201)
    ).body.id as string;
  /** A callback recorded by a transaction of the test's own (as an operator's bulk load would). */
  const INSERT = `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
                  VALUES ($1::uuid, $2::uuid, 0, 'http://127.0.0.1:9/feed', '{"message":0,"withdrawalId":null,"companyId":"' || $2::text || '","limitRequestId":null,"loanId":null}', 'pending', now() + interval '1 day')
                  RETURNING id`;

  // No worker: the callbacks wait, undelivered; the feed lists them whatever their status.
  const e2e = harness({ ROLE: 'api' }, { partner: 'Acme Bank' });
  beforeAll(async () => {
    ({ t, p: acme } = e2e);
    other = await createPartner(t, 'Other Bank');
    dbUrl = t.config.databaseUrl;
  });

  it('paged to the end with no gaps or repeats while 16 writers commit, including transactions held open across later commits', async () => {
    const companies = await Promise.all(Array.from({ length: 16 }, () => company(acme)));
    const theirs = await company(other);
    const seen: Item[] = [];
    let next: string | null = null;
    let writing = true;
    const read = async () => {
      const got = await page(acme, next, 1 + Math.floor(Math.random() * 40));
      seen.push(...got.items);
      next = got.next;
      return got.items.length;
    };
    const reader = (async () => {
      while (writing) await read();
    })();

    // Two transactions of the test's own, opened once the writers are under way: one takes its
    // id then and inserts only after every writer committed; one inserts then and commits after
    // every writer.
    const early = new Client({ connectionString: dbUrl });
    const late = new Client({ connectionString: dbUrl });
    await early.connect();
    await late.connect();
    let written = 0;
    let lateId = '';
    let exposedWhileHeld: number;
    const opened: Promise<void>[] = []; // a writer opens them, once
    const open = async () => {
      await early.query('BEGIN');
      await early.query('SELECT pg_current_xact_id()');
      await late.query('BEGIN');
      lateId = ((await late.query(INSERT, [acme.id, companies[0]])).rows as { id: string }[])[0].id;
    };
    try {
      let days = 0;
      await Promise.all(
        companies.map(async (c, w) => {
          for (let i = 0; i < 25; i++) {
            await t
              .admin('patch', `/admin/v1/companies/${c}/credit`, { repaymentTermDays: 1 + (days++ % 3000) })
              .expect(200);
            if (++written === 100) opened.push(open());
            if (w === 0 && i % 10 === 0)
              await t.admin('patch', `/admin/v1/companies/${theirs}/credit`, { repaymentTermDays: 1 + i }).expect(200);
            if (w === 1 && i % 10 === 0)
              await t.as(acme.apiKey, 'post', '/v1/callbacks/test', { companyId: c }).expect(202);
          }
        }),
      );
      expect(opened).toHaveLength(1);
      await Promise.all(opened);
      // Every writer committed; the held transactions keep the later ones out of the feed.
      const [{ n }] = await t.sql<{ n: number }>(
        'SELECT count(*)::int AS n FROM callbacks WHERE partner_id = $1 AND NOT test',
        [acme.id],
      );
      expect(n).toBe(400);
      exposedWhileHeld = (await page(acme, null, 1000)).items.length;
      const [{ id: earlyId }] = (await early.query(INSERT, [acme.id, companies[1]])).rows as { id: string }[];
      await early.query('COMMIT');
      await late.query('COMMIT');
      expect(lateId).not.toBe('');
      writing = false;
      await reader;
      // To the end: every callback is committed; a transaction of another test elsewhere in this
      // database may still hold the newest back for a moment (the feed waits for it, by design).
      await until(async () => (await read(), seen.length >= 402), {
        timeoutMs: 30_000,
        what: 'the reader to reach every callback',
      });
      expect(await read()).toBe(0);
      expect(seen.map((i) => i.id)).toEqual(expect.arrayContaining([earlyId, lateId]));
    } finally {
      writing = false;
      await early.end();
      await late.end();
    }
    expect(exposedWhileHeld).toBeGreaterThan(0);
    expect(exposedWhileHeld).toBeLessThan(400);

    const all = await t.sql<{ id: string }>('SELECT id FROM callbacks WHERE partner_id = $1 AND NOT test', [acme.id]);
    expect(all).toHaveLength(402);
    expect(seen.map((i) => i.id).sort()).toEqual(all.map((r) => r.id).sort());
    expect(new Set(seen.map((i) => i.id)).size).toBe(seen.length);
    for (let i = 1; i < seen.length; i++) expect(BigInt(seen[i].position) > BigInt(seen[i - 1].position)).toBe(true);
    expect(seen.every((i) => !i.test && i.companyId !== theirs)).toBe(true);

    // Resumable from any item's position; nothing new: next is the after given.
    const middle = seen[200];
    const resumed = await page(acme, middle.position, 3);
    expect(resumed.items.map((i) => i.id)).toEqual(seen.slice(201, 204).map((i) => i.id));
    const end = await page(acme, next, 10);
    expect(end).toEqual({ items: [], next });
    // The other partner reads only its own.
    const theirsFeed = await page(other, null, 1000);
    expect(theirsFeed.items.map((i) => i.companyId)).toEqual(Array(3).fill(theirs));
  });

  it('a callback of a transaction that took its id before a later one committed is exposed only once it ends', async () => {
    const c = await company(acme);
    const { next: start } = await page(acme, null, 1000);
    const held = new Client({ connectionString: dbUrl });
    await held.connect();
    try {
      await held.query('BEGIN');
      await held.query('SELECT pg_current_xact_id()');
      await t.admin('patch', `/admin/v1/companies/${c}/credit`, { repaymentTermDays: 99 }).expect(200);
      // Committed, but below it a transaction may still record one: not exposed yet.
      expect(await page(acme, start, 10)).toEqual({ items: [], next: start });
      const [{ id }] = (await held.query(INSERT, [acme.id, c])).rows as { id: string }[];
      await held.query('COMMIT');
      const got = await until(
        async () => {
          const p = await page(acme, start, 10);
          return p.items.length === 2 ? p.items : null;
        },
        { what: 'both callbacks exposed' },
      );
      // The held transaction's callback comes first: its id is the smaller.
      expect(got[0].id).toBe(id);
    } finally {
      await held.end();
    }
  });

  it('a transaction open in another database of the cluster does not hold the feed back', async () => {
    const c = await company(acme);
    const { next: start } = await page(acme, null, 1000);
    const elsewhere = new Client({
      connectionString: Object.assign(new URL(dbUrl), { pathname: '/postgres' }).toString(),
    });
    await elsewhere.connect();
    try {
      await elsewhere.query('BEGIN');
      await elsewhere.query('SELECT pg_current_xact_id()');
      await t.admin('patch', `/admin/v1/companies/${c}/credit`, { repaymentTermDays: 98 }).expect(200);
      await until(async () => (await page(acme, start, 10)).items.length === 1, {
        timeoutMs: 30_000,
        what: 'the callback exposed while the other database holds a transaction',
      });
    } finally {
      await elsewhere.query('ROLLBACK').catch(() => undefined);
      await elsewhere.end();
    }
  });

  it.each([
    ['limit=0', /limit must not be less than 1/],
    ['limit=1001', /limit must not be greater than 1000/],
    ['limit=abc', /limit must be an integer/],
    ['limit=', /limit must be an integer/],
    ['limit=1&limit=2', /limit must be an integer/],
    ['after=abc', /after must be a position returned by the feed/],
    ['after=-1', /after must be a position returned by the feed/],
    ['after=01', /after must be a position returned by the feed/],
    [`after=${'9'.repeat(41)}`, /after must be shorter than or equal to 40 characters/],
    [`after=${'9'.repeat(40)}`, /after is not a position the feed returns/],
    ['after=19999999999999999999', /after is not a position the feed returns/],
    [`after=${(2n ** 40n * 10n ** 19n).toString()}`, /after is beyond every position the feed has returned/],
    ['after=1&after=2', /after must be a string/],
    ['cursor=x', /query parameter cursor is not accepted; accepted: after, limit/],
  ])('%s → 400 naming the parameter', async (query, message) => {
    const res = await t.as(acme.apiKey, 'get', `/v1/callbacks/feed?${query}`).expect(400);
    expect(JSON.stringify(res.body.message)).toMatch(message);
  });

  it('a page is one range of callbacks_feed_idx, under custom and generic plans, on a large table', async () => {
    const c = await company(acme);
    await t.sql(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, delivered_at)
       SELECT CASE WHEN g % 4 = 0 THEN $2::uuid ELSE $1::uuid END, $3::uuid, 0, 'http://127.0.0.1:9/feed',
              '{"message":0,"withdrawalId":null,"companyId":"' || $3::text || '","limitRequestId":null,"loanId":null}', 'delivered', now()
         FROM generate_series(1, 200000) g`,
      [acme.id, other.id, c],
    );
    await t.sql('ANALYZE callbacks');
    const { items } = await page(acme, null, 1000);
    const after = items[500].position;
    const xact = BigInt(after) / 10n ** 19n;
    const seq = BigInt(after) % 10n ** 19n;
    for (const mode of ['force_custom_plan', 'force_generic_plan']) {
      const plan = await explain(mode, [acme.id, xact.toString(), seq.toString(), 1000]);
      expect(`${mode}: ${plan}`).toMatch(/Index Scan using callbacks_feed_idx/);
      // No other way into callbacks, and nothing sorted (the catalogs the horizon reads are a few rows).
      expect(`${mode}: ${plan}`).not.toMatch(
        /(Seq Scan|Bitmap Heap Scan|Index Only Scan|Index Scan using (?!callbacks_feed_idx)\w+) on callbacks|Sort/,
      );
    }
  }, 120_000);

  /** The feed's statement, prepared as the service prepares it, planned under `mode`. */
  async function explain(mode: string, values: unknown[]): Promise<string> {
    const pg = new Client({ connectionString: dbUrl });
    await pg.connect();
    try {
      const { storeStatement } = await import('../src/callbacks/store/statements.js');
      await pg.query(`SET plan_cache_mode = ${mode}`);
      await pg.query(`PREPARE feed(uuid, text, text, int) AS ${storeStatement('callback-feed-page').text}`);
      const { rows } = await pg.query(
        `EXPLAIN EXECUTE feed(${values.map((v) => (typeof v === 'number' ? v : `'${String(v)}'`)).join(', ')})`,
      );
      return rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n');
    } finally {
      await pg.end();
    }
  }
});
