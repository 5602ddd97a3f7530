import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The bootstrap operator `admin` becomes an operator like any other: its ADMIN_TOKEN is stored as
 * a hash on its row (set at start by operators-bootstrap.ts) and revoked like any token. The
 * values it held before are kept as hashes in `retired_bootstrap_tokens`, so a revoked or replaced
 * ADMIN_TOKEN stays refused after every restart; only a value never used before bootstraps `admin`
 * again (docs/operations.md, "The bootstrap token").
 */
export class RevocableBootstrap1764400000000 implements MigrationInterface {
  name = 'RevocableBootstrap1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE retired_bootstrap_tokens
      (token_hash text PRIMARY KEY, retired_at timestamptz NOT NULL DEFAULT now())`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE retired_bootstrap_tokens`);
  }
}
