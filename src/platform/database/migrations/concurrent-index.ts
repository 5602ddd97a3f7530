import { QueryRunner } from 'typeorm';

/**
 * Builds an index CONCURRENTLY (the migration runs outside a transaction, so a large table keeps
 * taking writes). A concurrent build that was interrupted leaves an invalid index behind: it is
 * dropped and built again.
 */
export async function buildIndexConcurrently(q: QueryRunner, name: string, on: string): Promise<void> {
  const invalid = (await q.query(
    `SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = $1 AND NOT i.indisvalid`,
    [name],
  )) as unknown[];
  if (invalid.length > 0) await q.query(`DROP INDEX CONCURRENTLY ${name}`);
  await q.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${name} ON ${on}`);
}
