import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The portal's links and sessions remember the operator who made them, and a link can be ended:
 * - `portal_links.operator_id`, `portal_sessions.operator_id`: the operator whose link opened the
 *   session (null: the partner's own), so every action in it is audited naming that operator, and
 *   revoking the operator ends both.
 * - `portal_links.ended_at`: set, with the partner's sessions' end, on every link of the partner
 *   still unused (an operator's DELETE …/portal-sessions, an API-key rotation without overlap).
 * - `portal_links_unused_idx`: those links, by partner (the revocation's UPDATE).
 * New nullable columns (no rewrite) and an index of a table holding an hour's links: one transaction.
 */
export class PortalLinkOwners1764700650000 implements MigrationInterface {
  name = 'PortalLinkOwners1764700650000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE portal_links
      ADD COLUMN operator_id uuid REFERENCES operators(id),
      ADD COLUMN ended_at timestamptz`);
    await q.query('ALTER TABLE portal_sessions ADD COLUMN operator_id uuid REFERENCES operators(id)');
    await q.query(`CREATE INDEX portal_links_unused_idx ON portal_links (partner_id)
      WHERE used_at IS NULL AND ended_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX IF EXISTS portal_links_unused_idx');
    await q.query('ALTER TABLE portal_sessions DROP COLUMN operator_id');
    await q.query('ALTER TABLE portal_links DROP COLUMN operator_id, DROP COLUMN ended_at');
  }
}
