import { MigrationInterface, QueryRunner } from 'typeorm';
import { buildIndexConcurrently } from './concurrent-index.js';

/**
 * Indexes that make each retention batch (src/operations) a short index range scan: delivered
 * callbacks by delivery time, idempotency keys by age. Built CONCURRENTLY, outside a transaction,
 * so upgrading a deployment whose callbacks table is already large does not block its writes.
 */
export class RetentionIndexes1763900300000 implements MigrationInterface {
  name = 'RetentionIndexes1763900300000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await buildIndexConcurrently(
      q,
      'callbacks_delivered_at_idx',
      `callbacks (delivered_at) WHERE status = 'delivered'`,
    );
    await buildIndexConcurrently(q, 'idempotency_keys_created_at_idx', 'idempotency_keys (created_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS idempotency_keys_created_at_idx');
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS callbacks_delivered_at_idx');
  }
}
