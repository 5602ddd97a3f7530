import type { DataSource, DataSourceOptions } from 'typeorm';
import { MIGRATIONS, openDatabase } from '../src/platform/database/database.js';
import { TestEvents1764820000000 } from '../src/platform/database/migrations/1764820000000-test-events.js';
import { dataSourceOptions } from '../src/data-source.js';
import { dropDatabase } from './support/scratch-database.js';
import { runIdentity } from './support/run-identity.js';

/**
 * Migration 1764820000000 (test events): operational_events takes the type `operations.test`
 * beside the others, and reverted, drops the test events with their deliveries and takes it no more.
 */
describe('the migration of test events', () => {
  const { databaseUrl } = runIdentity();
  const options = { ...dataSourceOptions(databaseUrl), url: databaseUrl } as DataSourceOptions & { url: string };
  let db: DataSource;
  let partner: string;
  const event = (type: string) =>
    db.query(`INSERT INTO operational_events (partner_id, type, data, sent) VALUES ($1, $2, '{}', true) RETURNING id`, [
      partner,
      type,
    ]);

  beforeAll(async () => {
    // Up to this migration only: the test reverts it as the last one run.
    db = await openDatabase({
      ...options,
      migrations: MIGRATIONS.slice(0, MIGRATIONS.indexOf(TestEvents1764820000000) + 1),
    });
    [{ id: partner }] = await db.query(
      `INSERT INTO partners (name, api_key_hash, signing_secret) VALUES ('P', md5('P'), 's') RETURNING id`,
    );
  }, 60_000);
  afterAll(async () => {
    await db?.destroy();
    await dropDatabase(databaseUrl);
  });

  it('takes operations.test beside the other types, and no type it does not know', async () => {
    await event('callbacks.failed');
    const [{ id }] = await event('operations.test');
    await db.query(
      `INSERT INTO callbacks (id, partner_id, url, body, event_type, status, test, attempt_limit)
       VALUES ($1, $2, 'https://ops.example/e', '{}', 'operations.test', 'failed', true, 1)`,
      [id, partner],
    );
    await expect(event('operations.other')).rejects.toThrow(/operational_events_type_check/);
  });

  it('reverts: the test events and their deliveries go, the type is refused; and runs again', async () => {
    await db.undoLastMigration({ transaction: 'each' });
    expect(await db.query(`SELECT type FROM operational_events`)).toEqual([{ type: 'callbacks.failed' }]);
    expect(await db.query(`SELECT id FROM callbacks`)).toEqual([]);
    await expect(event('operations.test')).rejects.toThrow(/operational_events_type_check/);
    await db.runMigrations({ transaction: 'each' });
    await event('operations.test');
  });
});
