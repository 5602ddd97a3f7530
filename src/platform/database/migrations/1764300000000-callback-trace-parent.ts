import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The trace a callback belongs to (a W3C traceparent: the server span of the request that
 * recorded it), written in the same insert as the callback, so that every attempt to deliver it,
 * in whatever worker and after whatever restart, is a span of that request's trace
 * (docs/operations.md, "Traces"). Null when tracing was off. A nullable column without a default:
 * adding it rewrites nothing, however large the table.
 */
export class CallbackTraceParent1764300000000 implements MigrationInterface {
  name = 'CallbackTraceParent1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE callbacks ADD COLUMN IF NOT EXISTS trace_parent text');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE callbacks DROP COLUMN IF EXISTS trace_parent');
  }
}
