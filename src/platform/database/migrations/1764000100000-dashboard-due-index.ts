import { MigrationInterface, QueryRunner } from 'typeorm';
import { buildIndexConcurrently } from './concurrent-index.js';

/**
 * The dashboard's Waiting and Delayed tabs read pending callbacks in due order across every
 * destination. Their index was `(next_attempt_at) WHERE status = 'pending'`, which admission's
 * statements could use as well: with statistics taken while the table held one destination's
 * backlog, a pick for another destination walked it past that whole backlog. The dashboard's
 * index is now on the due time's UTC wall-clock form, an expression only the dashboard's queries
 * state (src/delivery/dashboard/dashboard-store.ts), so admission's only index is `callbacks_pending_idx
 * (destination, next_attempt_at)`. Built CONCURRENTLY, outside a transaction, so a large table
 * keeps taking writes.
 */
export class DashboardDueIndex1764000100000 implements MigrationInterface {
  name = 'DashboardDueIndex1764000100000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await buildIndexConcurrently(
      q,
      'callbacks_pending_due_utc_idx',
      `callbacks ((next_attempt_at AT TIME ZONE 'UTC')) WHERE status = 'pending'`,
    );
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS callbacks_pending_due_idx');
  }

  async down(q: QueryRunner): Promise<void> {
    await buildIndexConcurrently(
      q,
      'callbacks_pending_due_idx',
      `callbacks (next_attempt_at) WHERE status = 'pending'`,
    );
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS callbacks_pending_due_utc_idx');
  }
}
