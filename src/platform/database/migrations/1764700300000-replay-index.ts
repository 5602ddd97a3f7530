import { MigrationInterface, QueryRunner } from 'typeorm';
import { buildIndexConcurrently } from './concurrent-index.js';

/**
 * A partner's bulk redelivery (replay after an outage) takes its failed callbacks created in a
 * window: one range of this index, whatever the table's size or the other partners' backlogs.
 * Partial on `failed`: it holds only dead letters, so no write on the delivery path touches it but
 * the one that fails a callback (and the redelivery that takes it out). Without a partner (an
 * operator's), its whole (small) range is read with the window checked on each entry. Built
 * CONCURRENTLY, outside a transaction, so a large table keeps taking writes.
 */
export class ReplayIndex1764700300000 implements MigrationInterface {
  name = 'ReplayIndex1764700300000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await buildIndexConcurrently(
      q,
      'callbacks_failed_idx',
      `callbacks (partner_id, created_at) WHERE status = 'failed'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS callbacks_failed_idx');
  }
}
