import { MigrationInterface, QueryRunner } from 'typeorm';
import { buildIndexConcurrently } from './concurrent-index.js';

/**
 * The partner's delivery log lists one partner's callbacks newest first: without this index a
 * partner with few callbacks among many would read the whole table to fill a page. Built
 * CONCURRENTLY, outside a transaction, so an upgrade with a large callbacks table does not block
 * its writes.
 */
export class CallbacksPartnerIndex1763900200000 implements MigrationInterface {
  name = 'CallbacksPartnerIndex1763900200000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await buildIndexConcurrently(q, 'callbacks_partner_seq_idx', 'callbacks (partner_id, seq)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS callbacks_partner_seq_idx');
  }
}
