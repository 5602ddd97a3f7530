import type { DataSource, DataSourceOptions } from 'typeorm';
import { MIGRATIONS, openDatabase } from '../src/platform/database/database.js';
import { PartnerLookupIndexes1764810100000 } from '../src/platform/database/migrations/1764810100000-partner-lookup-indexes.js';
import { PartnerKeyRotatedAt1764810000000 } from '../src/platform/database/migrations/1764810000000-partner-key-rotated-at.js';
import { dataSourceOptions } from '../src/data-source.js';
import { dropDatabase } from './support/scratch-database.js';
import { runIdentity } from './support/run-identity.js';

/**
 * Migrations 1764810000000 and 1764810100000 (the operators' partner look-up) over a database
 * that ran every migration before them: a partner's last API-key rotation comes from the audit
 * log's `partner.api-key.rotate` entries (none: null), and the look-up's indexes are built.
 */
describe("the migrations of the operators' partner look-up", () => {
  const { databaseUrl } = runIdentity();
  const options = { ...dataSourceOptions(databaseUrl), url: databaseUrl } as DataSourceOptions & { url: string };
  let db: DataSource;
  const ids: Record<string, string> = {};
  let lastRotation: Date;

  beforeAll(async () => {
    const before = MIGRATIONS.slice(0, MIGRATIONS.indexOf(PartnerKeyRotatedAt1764810000000));
    const old = await openDatabase({ ...options, migrations: before });
    const partner = `INSERT INTO partners (name, api_key_hash, signing_secret) VALUES ($1, md5($1), 's') RETURNING id`;
    for (const name of ['Rotated twice', 'Never rotated']) [{ id: ids[name] }] = await old.query(partner, [name]);
    const [{ id: operator }] = await old.query(`SELECT id FROM operators WHERE name = 'admin'`);
    const entry = `INSERT INTO audit_entries (operator_id, action, target_type, target_id, at)
                   VALUES ($1, $2, 'partner', $3, $4) RETURNING at`;
    await old.query(entry, [operator, 'partner.api-key.rotate', ids['Rotated twice'], '2026-11-01T10:00:00Z']);
    const last = [operator, 'partner.api-key.rotate', ids['Rotated twice'], '2026-11-20T08:30:00.123456Z'];
    [{ at: lastRotation }] = await old.query(entry, last);
    await old.query(entry, [operator, 'partner.signing-secret.rotate', ids['Never rotated'], '2026-11-21T00:00:00Z']);
    await old.destroy();
    // Up to the look-up's migrations only: the test reverts them as the last two run.
    db = await openDatabase({
      ...options,
      migrations: MIGRATIONS.slice(0, MIGRATIONS.indexOf(PartnerLookupIndexes1764810100000) + 1),
    });
  }, 60_000);
  afterAll(async () => {
    await db?.destroy();
    await dropDatabase(databaseUrl);
  });

  it("fills each partner's last API-key rotation from the audit log, null for one never rotated", async () => {
    const rows: { name: string; api_key_rotated_at: Date | null }[] = await db.query(
      `SELECT name, api_key_rotated_at FROM partners ORDER BY name`,
    );
    expect(rows).toEqual([
      { name: 'Never rotated', api_key_rotated_at: null },
      { name: 'Rotated twice', api_key_rotated_at: lastRotation },
    ]);
  });

  it('builds the list order, name trigram and open destination indexes, with pg_trgm', async () => {
    const rows: { indexname: string; indexdef: string }[] = await db.query(
      `SELECT indexname, indexdef FROM pg_indexes
        WHERE indexname IN ('partners_created_idx', 'partners_name_trgm_idx', 'destinations_open_idx') ORDER BY 1`,
    );
    expect(rows.map((r) => r.indexdef)).toEqual([
      'CREATE INDEX destinations_open_idx ON public.destinations USING btree (opened_at, key) ' +
        'WHERE (opened_at IS NOT NULL)',
      'CREATE INDEX partners_created_idx ON public.partners USING btree (created_at, id)',
      'CREATE INDEX partners_name_trgm_idx ON public.partners USING gin (name gin_trgm_ops) WITH (fastupdate=off)',
    ]);
  });

  it('reverts both, and runs again', async () => {
    // The indexes' migration runs outside a transaction (CONCURRENTLY), down as up.
    await db.undoLastMigration({ transaction: 'none' });
    await db.undoLastMigration({ transaction: 'none' });
    const column = `SELECT count(*)::int AS n FROM information_schema.columns
                     WHERE table_name = 'partners' AND column_name = 'api_key_rotated_at'`;
    const [{ n }] = await db.query(column);
    expect(n).toBe(0);
    await db.runMigrations({ transaction: 'each' });
    const [{ at }] = await db.query(`SELECT api_key_rotated_at AS at FROM partners WHERE name = 'Rotated twice'`);
    expect(at).toEqual(lastRotation);
  });
});
