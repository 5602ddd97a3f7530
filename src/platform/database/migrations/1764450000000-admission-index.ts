import { MigrationInterface, QueryRunner } from 'typeorm';
import { buildIndexConcurrently } from './concurrent-index.js';

/**
 * Admission reads a destination's pending callbacks in the order it takes them, and starts past
 * those it took before (its floor, src/delivery/admission-floors.ts). Its index was `(destination,
 * next_attempt_at)`: callbacks recorded by one statement share one due time (the transaction's
 * now()), so a floor on the due time alone could not start past the ones already taken, and
 * PostgreSQL kept such equal keys as one posting list, whose entries a scan cannot mark dead
 * until all of them are: every pass read again each callback already admitted from that
 * statement. With the insertion number as the last column every key is unique: a floor is one
 * exact position, and each dead entry is marked once and skipped after. Built CONCURRENTLY,
 * outside a transaction, so a large table keeps taking writes.
 */
export class AdmissionIndex1764450000000 implements MigrationInterface {
  name = 'AdmissionIndex1764450000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await buildIndexConcurrently(
      q,
      'callbacks_admission_idx',
      `callbacks (destination, next_attempt_at, seq) WHERE status = 'pending'`,
    );
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS callbacks_pending_idx');
  }

  async down(q: QueryRunner): Promise<void> {
    await buildIndexConcurrently(
      q,
      'callbacks_pending_idx',
      `callbacks (destination, next_attempt_at) WHERE status = 'pending'`,
    );
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS callbacks_admission_idx');
  }
}
