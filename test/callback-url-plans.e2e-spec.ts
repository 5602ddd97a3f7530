import { storeStatement } from '../src/callbacks/store/statements.js';
import { PlanNode, scansOf } from './support/plans.js';
import { scratchDatabase, ScratchDatabase, seedCompany } from './support/scratch-database.js';

/** Delivered callbacks of other partners, and of the partner read, at URLs of its own. */
const OTHERS = 150_000;
const RECENT = 50_000;
/** Destinations of the other partners. */
const DESTINATIONS = 20_000;

/**
 * GET /v1/callback-urls reads each URL's last delivery and each origin's destination state from the
 * callback store: each costs O(the URLs asked for), whatever the deliveries kept. On OTHERS
 * deliveries of 50 other partners and RECENT of the partner's own at one URL, its other URL last
 * delivered before all of them, the plan of `callback-urls-last-delivered` (as the ORM runs it)
 * reads one entry of `callbacks_url_delivered_idx` per URL delivered to, none for one never
 * delivered to, and nothing else of callbacks; `destinations-states` reads the partner's
 * destinations at those origins by `destinations_partner_idx` among DESTINATIONS of others'.
 */
describe(`a partner's callback URLs over ${(OTHERS + RECENT).toLocaleString('en')} delivered callbacks`, () => {
  let s: ScratchDatabase;
  let partnerId: string;
  const busy = 'https://hooks.example.com/busy';
  const quiet = 'https://hooks.example.com/quiet';
  const never = 'https://other.example.com/never';

  beforeAll(async () => {
    s = await scratchDatabase();
    ({ partnerId } = await seedCompany(s.pool));
    const deliver = (partner: string, url: string, n: number, ago: string) =>
      s.pool.query(
        `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, delivered_at)
         SELECT c.partner_id, c.id, 0, $2, '{}', 'delivered', now() - $4::interval + g * interval '1 millisecond'
           FROM companies c, generate_series(1, $3::int) g WHERE c.partner_id = $1`,
        [partner, url, n, ago],
      );
    const { rows } = await s.pool.query<{ id: string }>(
      `WITH p AS (INSERT INTO partners (name, api_key_hash, signing_secret)
                  SELECT 'p' || g, md5(g::text), 's' FROM generate_series(1, 50) g RETURNING id)
       INSERT INTO companies (partner_id, name, currency, credit_status)
       SELECT id, 'c', 'EUR', 'active' FROM p RETURNING partner_id AS id`,
    );
    for (const [i, other] of rows.entries())
      await deliver(other.id, `https://hooks.example.com/${i % 5}`, OTHERS / rows.length, '1 hour');
    // Many destinations of the others (a table too small is read whole, rightly).
    await s.pool.query(
      `INSERT INTO destinations (key, partner_id, origin)
       SELECT c.partner_id || ' https://d' || g || '.example', c.partner_id, 'https://d' || g || '.example'
         FROM companies c, generate_series(1, $1::int) g WHERE c.partner_id <> $2`,
      [DESTINATIONS / rows.length, partnerId],
    );
    await deliver(partnerId, quiet, 1, '10 days');
    await deliver(partnerId, busy, RECENT, '2 hours');
    await s.pool.query('ANALYZE');
  }, 180_000);
  afterAll(() => s?.close());

  const explain = async (name: string, params: unknown[]): Promise<{ plan: PlanNode; rows: unknown[] }> => {
    const text = storeStatement(name).text;
    const [
      {
        'QUERY PLAN': [{ Plan: plan }],
      },
    ] = await s.db.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, params);
    return { plan, rows: await s.db.query(text, params) };
  };

  it("finds each URL's last delivery by one index entry, however long ago and whatever came since", async () => {
    const { plan, rows } = await explain('callback-urls-last-delivered', [partnerId, [busy, quiet, never]]);
    const scans = scansOf(plan, new Set(['callbacks']));
    expect(scans.map((x) => `${x.type} ${x.index}`)).toEqual(['Index Scan callbacks_url_delivered_idx']);
    // At most an entry per URL (EXPLAIN rounds the rows per loop), and a few pages each: its index path and its row.
    expect(scans[0].examined).toBeLessThanOrEqual(3);
    expect(scans[0].pages).toBeLessThan(30);
    const byUrl = new Map((rows as { url: string; delivered_at: Date | null }[]).map((r) => [r.url, r.delivered_at]));
    const [{ at }] = (
      await s.pool.query<{ at: Date }>(
        `SELECT max(delivered_at) AS at FROM callbacks WHERE partner_id = $1 AND url = $2`,
        [partnerId, quiet],
      )
    ).rows;
    expect(byUrl.get(quiet)).toEqual(at);
    expect(byUrl.get(busy)!.getTime()).toBeGreaterThan(at.getTime());
    expect(byUrl.get(never)).toBeNull();
  });

  it("reads the partner's destinations at the URLs' origins by its index", async () => {
    const { plan, rows } = await explain('destinations-states', [
      partnerId,
      ['https://hooks.example.com', 'https://other.example.com'],
    ]);
    const scans = scansOf(plan, new Set(['destinations']));
    expect(scans.map((x) => `${x.type} ${x.index}`)).toEqual(['Index Scan destinations_partner_idx']);
    expect((rows as { origin: string }[]).map((r) => r.origin)).toEqual(['https://hooks.example.com']);
  });
});
