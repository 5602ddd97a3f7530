import { MigrationInterface, QueryRunner } from 'typeorm';

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
    // An interrupted concurrent build leaves an invalid index behind: drop it and build again.
    const invalid = await q.query(`SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'callbacks_partner_seq_idx' AND NOT i.indisvalid`);
    if (invalid.length > 0) await q.query('DROP INDEX CONCURRENTLY callbacks_partner_seq_idx');
    await q.query('CREATE INDEX CONCURRENTLY IF NOT EXISTS callbacks_partner_seq_idx ON callbacks (partner_id, seq)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS callbacks_partner_seq_idx');
  }
}
