import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The dashboard's Waiting and Delayed tabs read pending callbacks in due order across every
 * destination. Their index was `(next_attempt_at) WHERE status = 'pending'`, which admission's
 * statements could use as well: with statistics taken while the table held one destination's
 * backlog, a pick for another destination walked it past that whole backlog. The dashboard's
 * index is now on the due time's UTC wall-clock form, an expression only the dashboard's queries
 * state (src/delivery/dashboard-store.ts), so admission's only index is `callbacks_pending_idx
 * (destination, next_attempt_at)`. Built CONCURRENTLY, outside a transaction, so a large table
 * keeps taking writes.
 */
export class DashboardDueIndex1764000100000 implements MigrationInterface {
  name = 'DashboardDueIndex1764000100000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await build(q, 'callbacks_pending_due_utc_idx', `callbacks ((next_attempt_at AT TIME ZONE 'UTC')) WHERE status = 'pending'`);
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS callbacks_pending_due_idx');
  }

  async down(q: QueryRunner): Promise<void> {
    await build(q, 'callbacks_pending_due_idx', `callbacks (next_attempt_at) WHERE status = 'pending'`);
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS callbacks_pending_due_utc_idx');
  }
}

/** A concurrent build that was interrupted leaves an invalid index behind: drop it and build again. */
async function build(q: QueryRunner, name: string, on: string): Promise<void> {
  const invalid = await q.query(`SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = $1 AND NOT i.indisvalid`, [name]);
  if (invalid.length > 0) await q.query(`DROP INDEX CONCURRENTLY ${name}`);
  await q.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${name} ON ${on}`);
}
