import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A partner may be an audit entry's actor: it rolls its own signing key (API §3, "The partner
 * itself"), audited as an operator's rotation is. An entry has exactly one actor, an operator or a
 * partner; the partner's name is kept as it was at the change, beside its id, so the log (in
 * src/operators, below the partners module) shows it without reading the partners' table.
 * The trigger refusing UPDATE and DELETE is unchanged: adding columns rewrites no row.
 */
export class AuditPartnerActor1764800100000 implements MigrationInterface {
  name = 'AuditPartnerActor1764800100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE audit_entries
      ALTER COLUMN operator_id DROP NOT NULL,
      ADD COLUMN partner_id uuid REFERENCES partners (id),
      ADD COLUMN partner_name text,
      ADD CONSTRAINT audit_entries_one_actor
        CHECK ((operator_id IS NULL) <> (partner_id IS NULL) AND (partner_id IS NULL) = (partner_name IS NULL))`);
  }

  /** Refused while a partner's entry exists: entries are never deleted, and operator_id would be null. */
  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE audit_entries
      DROP CONSTRAINT audit_entries_one_actor, DROP COLUMN partner_name, DROP COLUMN partner_id`);
    await q.query(`ALTER TABLE audit_entries ALTER COLUMN operator_id SET NOT NULL`);
  }
}
