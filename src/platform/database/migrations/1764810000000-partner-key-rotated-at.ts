import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `partners.api_key_rotated_at`: when the partner's API key was last replaced (null: never), which
 * the operators' partner view shows (GET /admin/v1/partners/{id}) so on call sees a recent rotation
 * without reading the audit log. Filled for existing partners from that log, whose
 * `partner.api-key.rotate` entries are the rotations made so far.
 */
export class PartnerKeyRotatedAt1764810000000 implements MigrationInterface {
  name = 'PartnerKeyRotatedAt1764810000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE partners ADD COLUMN api_key_rotated_at timestamptz');
    await q.query(`
      UPDATE partners p SET api_key_rotated_at = r.at
        FROM (SELECT target_id, max(at) AS at FROM audit_entries
               WHERE action = 'partner.api-key.rotate' GROUP BY target_id) r
       WHERE r.target_id = p.id::text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE partners DROP COLUMN api_key_rotated_at');
  }
}
