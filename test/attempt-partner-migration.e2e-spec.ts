import type { DataSource, DataSourceOptions } from 'typeorm';
import { MIGRATIONS, openDatabase } from '../src/platform/database/database.js';
import { AttemptPartner1764700500000 } from '../src/platform/database/migrations/1764700500000-attempt-partner.js';
import { dataSourceOptions } from '../src/data-source.js';
import { dropDatabase } from './support/scratch-database.js';
import { runIdentity } from './support/run-identity.js';

/** A partner with a company, a callback and two attempts of it, on the schema as it stands: the partner's id. */
async function seed(db: DataSource, name: string): Promise<string> {
  const [{ partner_id }]: { partner_id: string }[] = await db.query(
    `WITH p AS (INSERT INTO partners (name, api_key_hash, signing_secret) VALUES ($1, md5(random()::text), 's') RETURNING id),
     co AS (INSERT INTO companies (partner_id, name, currency, credit_status) SELECT id, 'C', 'EUR', 'active' FROM p RETURNING id, partner_id),
     cb AS (INSERT INTO callbacks (partner_id, company_id, message, url, body, status, delivered_at)
            SELECT partner_id, id, 0, 'https://inbox.example/cb', '{}', 'delivered', now() FROM co RETURNING id, partner_id)
     INSERT INTO callback_attempts (callback_id, number, started_at, duration_ms, status_code)
     SELECT id, n, now() - n * interval '1 minute', 5, 204 FROM cb, generate_series(1, 2) n RETURNING (SELECT partner_id FROM cb)`,
    [name],
  );
  return partner_id;
}

/** The indexes on callback_attempts, by name. */
const indexes = async (db: DataSource) =>
  (
    await db.query<{ indexname: string }[]>(
      `SELECT indexname FROM pg_indexes WHERE tablename = 'callback_attempts' ORDER BY indexname`,
    )
  ).map((i) => i.indexname);

/**
 * Migration 1764700500000 (attempts carry their partner) over a database that ran every migration
 * before it: each attempt gets its callback's partner, the column is NOT NULL, and the portal's
 * index by start time is replaced by one by partner and start time (as many indexes as before).
 */
describe('the migration giving each attempt its partner', () => {
  const { databaseUrl } = runIdentity();
  const options = { ...dataSourceOptions(databaseUrl), url: databaseUrl } as DataSourceOptions & { url: string };
  let db: DataSource;
  let partners: string[];
  let before: string[];

  beforeAll(async () => {
    const old = await openDatabase({
      ...options,
      migrations: MIGRATIONS.slice(0, MIGRATIONS.indexOf(AttemptPartner1764700500000)),
    });
    partners = [await seed(old, 'A'), await seed(old, 'B')];
    before = await indexes(old);
    await old.destroy();
    // Up to this migration only: the test reverts it as the last one run.
    db = await openDatabase({
      ...options,
      migrations: MIGRATIONS.slice(0, MIGRATIONS.indexOf(AttemptPartner1764700500000) + 1),
    });
  }, 60_000);
  afterAll(async () => {
    await db?.destroy();
    await dropDatabase(databaseUrl);
  });

  it("gives every attempt its callback's partner, NOT NULL from then on", async () => {
    const rows = await db.query(
      `SELECT a.partner_id, c.partner_id AS callback_partner FROM callback_attempts a JOIN callbacks c ON c.id = a.callback_id ORDER BY a.id`,
    );
    expect(rows).toEqual(
      [partners[0], partners[0], partners[1], partners[1]].map((p) => ({ partner_id: p, callback_partner: p })),
    );
    const [{ is_nullable }] = await db.query(
      `SELECT is_nullable FROM information_schema.columns WHERE table_name = 'callback_attempts' AND column_name = 'partner_id'`,
    );
    expect(is_nullable).toBe('NO');
  });

  it('replaces the index by start time with one by partner and start time: as many indexes as before', async () => {
    expect(before).toEqual([
      'callback_attempts_callback_idx',
      'callback_attempts_pkey',
      'callback_attempts_started_idx',
    ]);
    expect(await indexes(db)).toEqual([
      'callback_attempts_callback_idx',
      'callback_attempts_partner_started_idx',
      'callback_attempts_pkey',
    ]);
    const [{ indexdef }] = await db.query(
      `SELECT indexdef FROM pg_indexes WHERE indexname = 'callback_attempts_partner_started_idx'`,
    );
    expect(indexdef).toBe(
      'CREATE INDEX callback_attempts_partner_started_idx ON public.callback_attempts USING btree (partner_id, started_at)',
    );
  });

  it('reverts to the index by start time, and runs again', async () => {
    await db.undoLastMigration({ transaction: 'each' });
    expect(await indexes(db)).toEqual(before);
    await db.runMigrations({ transaction: 'each' });
    expect(await indexes(db)).toEqual([
      'callback_attempts_callback_idx',
      'callback_attempts_partner_started_idx',
      'callback_attempts_pkey',
    ]);
  });
});
