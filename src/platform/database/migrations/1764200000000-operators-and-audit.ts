import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Named operators, the audit log, and partner API-key rotation (docs/operations.md, "Operators,
 * roles and the audit log").
 * - `operators`: one row per credential, its token stored as a SHA-256 hash only. The bootstrap
 *   operator `admin` (the deployment's ADMIN_TOKEN) is a row without a hash: every process checks
 *   its own ADMIN_TOKEN in memory, so a rolling restart with a new one never flaps.
 * - `audit_entries`: one row per change made under /admin, written in the change's transaction.
 *   The table refuses UPDATE and DELETE (a trigger), so no code path can rewrite history.
 * - `partners.previous_api_key_hash`: the key a rotation replaced, valid until its expiry.
 */
export class OperatorsAndAudit1764200000000 implements MigrationInterface {
  name = 'OperatorsAndAudit1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE operators (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
        role text NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
        token_hash text,
        created_at timestamptz NOT NULL DEFAULT now(),
        revoked_at timestamptz
      )`);
    // Names stay unique for ever (a revoked one too), so an audit entry's name is never ambiguous.
    await q.query(`CREATE UNIQUE INDEX operators_name_key ON operators (name)`);
    await q.query(`CREATE UNIQUE INDEX operators_token_hash_key ON operators (token_hash)`);
    await q.query(`INSERT INTO operators (name, role, token_hash) VALUES ('admin', 'admin', NULL)`);

    await q.query(`
      CREATE TABLE audit_entries (
        seq bigserial PRIMARY KEY,
        id uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
        at timestamptz NOT NULL DEFAULT clock_timestamp(),
        operator_id uuid NOT NULL REFERENCES operators (id),
        action text NOT NULL,
        target_type text NOT NULL,
        target_id text,
        before jsonb NOT NULL DEFAULT '{}',
        after jsonb NOT NULL DEFAULT '{}'
      )`);
    // The list's filters, each read newest first by seq (a short index range per page).
    await q.query(`CREATE INDEX audit_entries_operator_idx ON audit_entries (operator_id, seq)`);
    await q.query(`CREATE INDEX audit_entries_target_idx ON audit_entries (target_type, target_id, seq)`);
    await q.query(`CREATE INDEX audit_entries_target_type_idx ON audit_entries (target_type, seq)`);
    await q.query(`
      CREATE FUNCTION audit_entries_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'audit entries cannot be changed or deleted' USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await q.query(`
      CREATE TRIGGER audit_entries_immutable BEFORE UPDATE OR DELETE ON audit_entries
        FOR EACH ROW EXECUTE FUNCTION audit_entries_immutable()`);

    await q.query(
      `ALTER TABLE partners ADD COLUMN previous_api_key_hash text, ADD COLUMN previous_key_expires_at timestamptz`,
    );
    await q.query(`CREATE UNIQUE INDEX partners_previous_api_key_hash_key ON partners (previous_api_key_hash)
      WHERE previous_api_key_hash IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX partners_previous_api_key_hash_key`);
    await q.query(`ALTER TABLE partners DROP COLUMN previous_api_key_hash, DROP COLUMN previous_key_expires_at`);
    await q.query(`DROP TABLE audit_entries`);
    await q.query(`DROP FUNCTION audit_entries_immutable()`);
    await q.query(`DROP TABLE operators`);
  }
}
