import type { DataSource, DataSourceOptions } from 'typeorm';
import { MIGRATIONS, openDatabase } from '../src/platform/database/database.js';
import { PartnerDestinations1764700000000 } from '../src/platform/database/migrations/1764700000000-partner-destinations.js';
import { dataSourceOptions } from '../src/data-source.js';
import { dropDatabase } from './support/scratch-database.js';
import { runIdentity } from './support/run-identity.js';

/** A partner and a company of it, on the schema as it stands. */
async function seed(db: DataSource, name: string): Promise<{ partnerId: string; companyId: string }> {
  const [row]: { partner_id: string; id: string }[] = await db.query(
    `WITH p AS (INSERT INTO partners (name, api_key_hash, signing_secret) VALUES ($1, md5(random()::text), 's') RETURNING id)
     INSERT INTO companies (partner_id, name, currency, credit_status) SELECT id, 'C', 'EUR', 'active' FROM p RETURNING partner_id, id`,
    [name],
  );
  return { partnerId: row.partner_id, companyId: row.id };
}

const SHARED = 'https://inbox.example';
const OWN = 'https://own.example:8443';

/**
 * Migration 1764700000000 (destinations per partner) over a database that ran every migration
 * before it: each origin's state goes to every partner's destination at that origin, no callback
 * is lost, and what was keyed by origin is keyed by destination.
 */
describe('the migration to one destination per partner and origin', () => {
  const { databaseUrl } = runIdentity();
  const options = { ...dataSourceOptions(databaseUrl), url: databaseUrl } as DataSourceOptions & { url: string };
  let db: DataSource;
  let a: { partnerId: string; companyId: string };
  let b: { partnerId: string; companyId: string };
  let before: { id: string; status: string }[];

  beforeAll(async () => {
    const old = await openDatabase({
      ...options,
      migrations: MIGRATIONS.slice(0, MIGRATIONS.indexOf(PartnerDestinations1764700000000)),
    });
    [a, b] = [await seed(old, 'A'), await seed(old, 'B')];
    // Both partners at the shared origin (its circuit open), partner A also at its own.
    await old.query(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
       VALUES ($1, $2, 0, $5 || '/a?token=x', '{}', 'pending', now()), ($1, $2, 0, $6 || '/a', '{}', 'delivered', NULL),
              ($3, $4, 0, $5 || '/b', '{}', 'pending', now()), ($3, $4, 2, $5 || '/b', '{}', 'failed', NULL)`,
      [a.partnerId, a.companyId, b.partnerId, b.companyId, SHARED, OWN],
    );
    await old.query(
      `UPDATE destinations SET window_size = 1, failures = 4, opened_at = now() - interval '5 minutes', next_probe_at = now() + interval '1 minute',
              probe_ms = 60000, last_error = 'HTTP 503', version = 7 WHERE origin = $1`,
      [SHARED],
    );
    await old.query(
      `INSERT INTO failure_notices (partner_id, destination, window_ends_at, pending_count, emitted_at, emitted_count, emitted_from, emitted_to)
       VALUES ($1, $2, now() + interval '5 minutes', 1, now(), 1, now(), now())`,
      [b.partnerId, SHARED],
    );
    before = await old.query(`SELECT id, status FROM callbacks ORDER BY seq`);
    await old.destroy();
    db = await openDatabase(options);
  }, 60_000);
  afterAll(async () => {
    await db?.destroy();
    await dropDatabase(databaseUrl);
  });

  it("copies each origin's state to every partner's destination there", async () => {
    const rows = await db.query(
      `SELECT key, partner_id, origin, window_size, failures, opened_at IS NOT NULL AS open, next_probe_at > now() AS probe_later, probe_ms, last_error, version::int
         FROM destinations ORDER BY origin, key`,
    );
    const open = {
      window_size: 1,
      failures: 4,
      open: true,
      probe_later: true,
      probe_ms: 60000,
      last_error: 'HTTP 503',
      version: 7,
    };
    const fresh = {
      window_size: 2,
      failures: 0,
      open: false,
      probe_later: null,
      probe_ms: 0,
      last_error: null,
      version: 0,
    };
    expect(rows).toEqual(
      [
        { key: `${a.partnerId} ${SHARED}`, partner_id: a.partnerId, origin: SHARED, ...open },
        { key: `${b.partnerId} ${SHARED}`, partner_id: b.partnerId, origin: SHARED, ...open },
        { key: `${a.partnerId} ${OWN}`, partner_id: a.partnerId, origin: OWN, ...fresh },
      ].sort((x, y) => x.origin.localeCompare(y.origin) || x.key.localeCompare(y.key)),
    );
  });

  it('keeps every callback as it was, its destination the partner and its origin', async () => {
    const rows = await db.query(`SELECT id, status, destination, partner_id FROM callbacks ORDER BY seq`);
    expect(rows.map((r: { id: string; status: string }) => ({ id: r.id, status: r.status }))).toEqual(before);
    expect(rows.map((r: { destination: string; partner_id: string }) => r.destination)).toEqual([
      `${a.partnerId} ${SHARED}`,
      `${a.partnerId} ${OWN}`,
      `${b.partnerId} ${SHARED}`,
      `${b.partnerId} ${SHARED}`,
    ]);
  });

  it('keys failure notices by destination, drops callback_destinations, and builds the indexes on callbacks.destination again', async () => {
    expect(await db.query(`SELECT destination FROM failure_notices`)).toEqual([
      { destination: `${b.partnerId} ${SHARED}` },
    ]);
    expect(await db.query(`SELECT to_regclass('callback_destinations') AS t`)).toEqual([{ t: null }]);
    const indexes = await db.query(
      `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'callbacks' AND indexdef LIKE '%(destination%' ORDER BY indexname`,
    );
    expect(indexes.map((i: { indexdef: string }) => i.indexdef.replace('public.', ''))).toEqual([
      `CREATE INDEX callbacks_admission_idx ON callbacks USING btree (destination, next_attempt_at, seq) WHERE (status = 'pending'::text)`,
      `CREATE INDEX callbacks_pending_schedule_idx ON callbacks USING btree (destination, schedule_started_at) WHERE (status = 'pending'::text)`,
      `CREATE INDEX callbacks_sending_idx ON callbacks (destination, lease_until) WHERE (status = 'sending'::text)`.replace(
        'ON callbacks (',
        'ON callbacks USING btree (',
      ),
    ]);
  });

  it("makes a new or moved callback's destination known for its partner (the triggers)", async () => {
    await db.query(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at) VALUES ($1, $2, 0, $3, '{}', 'pending', now())`,
      [b.partnerId, b.companyId, `${OWN}/b`],
    );
    await db.query(`UPDATE callbacks SET url = 'https://moved.example/x' WHERE partner_id = $1 AND url = $2`, [
      a.partnerId,
      `${SHARED}/a?token=x`,
    ]);
    const rows = await db.query(
      `SELECT key, partner_id, origin FROM destinations WHERE origin IN ($1, 'https://moved.example') ORDER BY origin, key`,
      [OWN],
    );
    expect(rows).toEqual(
      expect.arrayContaining([
        { key: `${b.partnerId} ${OWN}`, partner_id: b.partnerId, origin: OWN },
        { key: `${a.partnerId} https://moved.example`, partner_id: a.partnerId, origin: 'https://moved.example' },
      ]),
    );
  });
});
