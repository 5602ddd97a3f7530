import { MigrationInterface, QueryRunner } from 'typeorm';
import { buildIndexConcurrently } from './concurrent-index.js';

/**
 * The partner portal (docs/partners.md, "The portal"):
 * - `portal_links`: one-time sign-in links, by the SHA-256 of their token (the token is shown once,
 *   in the link's URL); `used_at` set by the one statement that redeems it.
 * - `portal_sessions`: a browser's session, by the SHA-256 of its cookie; its CSRF secret (the
 *   synchronizer token's key), last use (30 min idle) and start (8 h at most); `ended_at` once
 *   signed out or ended by an operator or an API-key rotation.
 * - `callback_attempts_started_idx`: the portal's last-24-hours chart reads attempts by start time.
 * Outside a transaction, so the index is built CONCURRENTLY on a large attempts table; the tables
 * are new (IF NOT EXISTS: an interrupted run starts again).
 */
export class PartnerPortal1764700400000 implements MigrationInterface {
  name = 'PartnerPortal1764700400000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS portal_links (
        token_hash text PRIMARY KEY,
        partner_id uuid NOT NULL REFERENCES partners(id),
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        used_at timestamptz
      )`);
    await q.query(`CREATE INDEX IF NOT EXISTS portal_links_expires_idx ON portal_links (expires_at)`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS portal_sessions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        token_hash text NOT NULL UNIQUE,
        partner_id uuid NOT NULL REFERENCES partners(id),
        csrf_secret text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_seen_at timestamptz NOT NULL DEFAULT now(),
        ended_at timestamptz
      )`);
    await q.query(
      `CREATE INDEX IF NOT EXISTS portal_sessions_partner_idx ON portal_sessions (partner_id) WHERE ended_at IS NULL`,
    );
    await buildIndexConcurrently(q, 'callback_attempts_started_idx', 'callback_attempts (started_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS callback_attempts_started_idx');
    await q.query('DROP TABLE IF EXISTS portal_sessions');
    await q.query('DROP TABLE IF EXISTS portal_links');
  }
}
