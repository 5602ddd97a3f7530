import { MigrationInterface, QueryRunner } from 'typeorm';
import { buildIndexConcurrently } from './concurrent-index.js';

/**
 * - `callbacks_feed_idx`: a partner's feed page is one range of it, in position order (partner,
 *   xact, seq), whatever the table's size; test callbacks are not in it.
 * - `callbacks_test_recent_idx`: the test callbacks' rate limit counts a partner's last minute.
 * Built CONCURRENTLY, outside a transaction, so upgrading a deployment whose callbacks table is
 * already large does not block its writes.
 */
export class SelfServiceIndexes1764100100000 implements MigrationInterface {
  name = 'SelfServiceIndexes1764100100000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await buildIndexConcurrently(q, 'callbacks_feed_idx', 'callbacks (partner_id, xact, seq) WHERE NOT test');
    await buildIndexConcurrently(q, 'callbacks_test_recent_idx', 'callbacks (partner_id, created_at) WHERE test');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS callbacks_test_recent_idx');
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS callbacks_feed_idx');
  }
}
