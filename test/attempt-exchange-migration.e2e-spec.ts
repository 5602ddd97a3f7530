import type { DataSource, DataSourceOptions } from 'typeorm';
import { MIGRATIONS, openDatabase } from '../src/platform/database/database.js';
import { AttemptExchange1764830590000 } from '../src/platform/database/migrations/1764830590000-attempt-exchange.js';
import { dataSourceOptions } from '../src/data-source.js';
import { dropDatabase } from './support/scratch-database.js';
import { runIdentity } from './support/run-identity.js';

/**
 * Migration 1764830590000 (attempt exchange): attempts take their kind, place in their schedule,
 * request headers and the answer's head; callbacks which repair restarted them. The attempts
 * before it keep their rows (the new columns empty); reverted, the columns go; and it runs again.
 */
describe('the migration of attempts with their exchange', () => {
  const { databaseUrl } = runIdentity();
  const options = { ...dataSourceOptions(databaseUrl), url: databaseUrl } as DataSourceOptions & { url: string };
  let db: DataSource;
  let callback: string;
  const attempt = (number: number, kind: string | null) =>
    db.query(
      `INSERT INTO callback_attempts (callback_id, partner_id, number, started_at, duration_ms, kind, request_headers,
                                      response_status, response_headers)
       SELECT id, partner_id, $2, now(), 5, $3, '{"webhook-id":"x"}', 'HTTP/1.1 204 No Content', '[["date","x"]]'
         FROM callbacks WHERE id = $1`,
      [callback, number, kind],
    );

  beforeAll(async () => {
    // Up to the one before it: an attempt recorded then, before the migration runs.
    db = await openDatabase({
      ...options,
      migrations: MIGRATIONS.slice(0, MIGRATIONS.indexOf(AttemptExchange1764830590000)),
    });
    const [{ id: partner }] = await db.query<{ id: string }[]>(
      `INSERT INTO partners (name, api_key_hash, signing_secret) VALUES ('P', md5('P'), 's') RETURNING id`,
    );
    [{ id: callback }] = await db.query<{ id: string }[]>(
      `WITH co AS (INSERT INTO companies (partner_id, name, currency, credit_status) VALUES ($1, 'C', 'EUR', 'active') RETURNING id)
       INSERT INTO callbacks (partner_id, company_id, message, url, body, status)
       SELECT $1, id, 0, 'https://a.example/h', '{}', 'pending' FROM co RETURNING id`,
      [partner],
    );
    await db.query(
      `INSERT INTO callback_attempts (callback_id, partner_id, number, started_at, duration_ms) VALUES ($1, $2, 1, now(), 5)`,
      [callback, partner],
    );
    await db.destroy();
    db = await openDatabase({
      ...options,
      migrations: MIGRATIONS.slice(0, MIGRATIONS.indexOf(AttemptExchange1764830590000) + 1),
    });
  }, 60_000);
  afterAll(async () => {
    await db?.destroy();
    await dropDatabase(databaseUrl);
  });

  it('keeps the attempts before it, empty; takes the kinds it knows and no other', async () => {
    expect(await db.query(`SELECT number, kind, request_headers FROM callback_attempts`)).toEqual([
      { number: 1, kind: null, request_headers: null },
    ]);
    await attempt(2, 'replay');
    await expect(attempt(3, 'again')).rejects.toThrow(/callback_attempts_kind_check/);
    await db.query(`UPDATE callbacks SET restarted_by = 'replay'`);
    await expect(db.query(`UPDATE callbacks SET restarted_by = 'operator'`)).rejects.toThrow(
      /callbacks_restarted_by_check/,
    );
  });

  it('reverts: the columns go, the attempts stay; and runs again', async () => {
    await db.undoLastMigration({ transaction: 'each' });
    expect(await db.query(`SELECT number FROM callback_attempts ORDER BY number`)).toEqual([
      { number: 1 },
      { number: 2 },
    ]);
    await expect(db.query(`SELECT kind FROM callback_attempts`)).rejects.toThrow(/kind/);
    await db.runMigrations({ transaction: 'each' });
    await attempt(3, 'probe');
  });
});
