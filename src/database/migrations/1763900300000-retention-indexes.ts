import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes that make each retention batch (src/retention) a short index range scan: delivered
 * callbacks by delivery time, idempotency keys by age. Built CONCURRENTLY, outside a transaction,
 * so upgrading a deployment whose callbacks table is already large does not block its writes.
 */
export class RetentionIndexes1763900300000 implements MigrationInterface {
  name = 'RetentionIndexes1763900300000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await this.build(q, 'callbacks_delivered_at_idx', `callbacks (delivered_at) WHERE status = 'delivered'`);
    await this.build(q, 'idempotency_keys_created_at_idx', 'idempotency_keys (created_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS idempotency_keys_created_at_idx');
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS callbacks_delivered_at_idx');
  }

  /** A concurrent build that was interrupted leaves an invalid index behind: drop it and build again. */
  private async build(q: QueryRunner, name: string, on: string): Promise<void> {
    const invalid = await q.query(`SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = $1 AND NOT i.indisvalid`, [name]);
    if (invalid.length > 0) await q.query(`DROP INDEX CONCURRENTLY ${name}`);
    await q.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${name} ON ${on}`);
  }
}
