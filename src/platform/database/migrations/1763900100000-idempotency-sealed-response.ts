import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Idempotent responses become the exact bytes sent, sealed (secret-box.ts), in a text column:
 * jsonb reordered their keys, refused some bodies after the create had committed, and kept a
 * partner's apiKey and signing secret in clear. The rows stored before are dropped, not
 * converted: their plain responses are what must go (a retry across the upgrade of a request
 * made before it is not recognised).
 */
export class IdempotencySealedResponse1763900100000 implements MigrationInterface {
  name = 'IdempotencySealedResponse1763900100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM idempotency_keys`);
    await q.query(`ALTER TABLE idempotency_keys DROP COLUMN response_body`);
    await q.query(`ALTER TABLE idempotency_keys ADD COLUMN response text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM idempotency_keys`);
    await q.query(`ALTER TABLE idempotency_keys DROP COLUMN response`);
    await q.query(`ALTER TABLE idempotency_keys ADD COLUMN response_body jsonb`);
  }
}
