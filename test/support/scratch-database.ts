import type { Pool } from 'pg';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { openDatabase } from '../../src/platform/database/database.js';
import { dataSourceOptions } from '../../src/data-source.js';
import { SqlPool } from '../../src/platform/database/sql-pool.js';
import { runIdentity } from './run-identity.js';

export interface ScratchDatabase {
  db: DataSource;
  /** The service's pool of hand-written SQL (SqlPool), as its hot paths use it. */
  sql: SqlPool;
  /** Its pg pool. */
  pool: Pool;
  databaseUrl: string;
  close: () => Promise<void>;
}

/**
 * A database of its own with the service's migrations and nothing else running: for tests of the
 * SQL itself (statements, functions, triggers) without booting the application.
 */
export async function scratchDatabase(): Promise<ScratchDatabase> {
  const { databaseUrl } = runIdentity();
  const db = await openDatabase(dataSourceOptions(databaseUrl));
  const sql = new SqlPool({ databaseUrl });
  return {
    db,
    sql,
    pool: sql.pool,
    databaseUrl,
    close: async () => {
      await sql.onApplicationShutdown();
      await db.destroy();
      await dropDatabase(databaseUrl);
    },
  };
}

/** Drops a test's own database (whoever is still connected to it). */
export async function dropDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = url.pathname.slice(1);
  url.pathname = '/postgres';
  const admin = new Client({ connectionString: url.toString() });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
  await admin.end();
}

/** A partner and one of its companies, as callbacks need them (foreign keys). */
export async function seedCompany(pool: Pool): Promise<{ partnerId: string; companyId: string }> {
  const { rows } = await pool.query<{ partner_id: string; id: string }>(
    `WITH p AS (INSERT INTO partners (name, api_key_hash, signing_secret) VALUES ('P', md5(random()::text), 's') RETURNING id)
     INSERT INTO companies (partner_id, name, currency, credit_status) SELECT id, 'C', 'EUR', 'active' FROM p RETURNING partner_id, id`,
  );
  return { partnerId: rows[0].partner_id, companyId: rows[0].id };
}
