import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The URL a callback goes to from its next attempt, when the partner moved it while an attempt
 * was under way (`sending`): that attempt keeps its destination and its place in that
 * destination's window until it settles; the settlement (or the lease's lapse) moves the callback
 * then (docs/architecture.md, "Changing a callback URL"). A nullable column without a default:
 * adding it rewrites nothing.
 */
export class CallbackNextUrl1764400100000 implements MigrationInterface {
  name = 'CallbackNextUrl1764400100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE callbacks ADD COLUMN IF NOT EXISTS next_url text');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE callbacks DROP COLUMN IF EXISTS next_url');
  }
}
