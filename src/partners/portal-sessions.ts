import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { hashToken, safeEqual } from '../platform/index.js';

/** A session ends after this long without a request. */
export const PORTAL_IDLE_MINUTES = 30;
/** And this long after it began, used or not. */
export const PORTAL_MAX_HOURS = 8;

/** A session row still in use: not ended, used within PORTAL_IDLE_MINUTES, begun within PORTAL_MAX_HOURS (PostgreSQL's clock). */
const LIVE = `ended_at IS NULL AND last_seen_at > now() - make_interval(mins => ${PORTAL_IDLE_MINUTES}) AND created_at > now() - make_interval(hours => ${PORTAL_MAX_HOURS})`;

/**
 * Rows of sessions no longer live, a batch ($1 rows), for the retention pass (src/operations/callback-retention.ts): a
 * cookie of a deleted session meets the same 401 page as one of an ended session. No index: the
 * table holds the sessions begun in the last PORTAL_MAX_HOURS and those that ended since the last
 * pass, and a pass reads it whole; an index on last use would cost every request its update.
 */
export const PRUNE_PORTAL_SESSIONS = `
  WITH doomed AS (SELECT id FROM portal_sessions WHERE NOT (${LIVE}) LIMIT $1 FOR UPDATE SKIP LOCKED)
  DELETE FROM portal_sessions s USING doomed d WHERE s.id = d.id`;

/** A live portal session, as the access gate finds it for a request. */
export interface PortalSession {
  id: string;
  partnerId: string;
  /** The key of the session's CSRF tokens (@fastify/csrf-protection's secret): kept server-side only. */
  csrfSecret: string;
}

/** A session's cookie value: 256 random bits, stored as its SHA-256 only (as API keys are). */
const newSessionToken = () => `fss_${randomBytes(32).toString('base64url')}`;

/**
 * The portal's server-side sessions (portal_sessions), one row per signed-in browser. Every request
 * reads its row (no cache), so ending a session — sign out, an operator's DELETE, an API-key
 * rotation without overlap — holds for the next request in every process.
 */
@Injectable()
export class PortalSessions {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Opens a session for the partner inside `m` (the link's redemption); returns the cookie value. */
  async open(m: EntityManager, partnerId: string): Promise<string> {
    const token = newSessionToken();
    await m.query('INSERT INTO portal_sessions (token_hash, partner_id, csrf_secret) VALUES ($1, $2, $3)', [
      hashToken(token),
      partnerId,
      randomBytes(18).toString('base64url'),
    ]);
    return token;
  }

  /**
   * The live session of a cookie value, its idle time restarted; null when it is unknown, ended,
   * idle for {@link PORTAL_IDLE_MINUTES} or older than {@link PORTAL_MAX_HOURS} (PostgreSQL's
   * clock, the same for every process). One statement on the token's unique index.
   */
  async find(token: string | undefined): Promise<PortalSession | null> {
    if (!token || token.length > 200) return null;
    const hash = hashToken(token);
    // An UPDATE's answer through TypeORM: [rows, affected].
    const [[row]]: [{ id: string; partner_id: string; csrf_secret: string; token_hash: string }[], number] = await this.db.query(
      `UPDATE portal_sessions SET last_seen_at = now() WHERE token_hash = $1 AND ${LIVE} RETURNING id, partner_id, csrf_secret, token_hash`,
      [hash],
    );
    if (!row || !safeEqual(row.token_hash, hash)) return null;
    return { id: row.id, partnerId: row.partner_id, csrfSecret: row.csrf_secret };
  }

  /** Sign out: this session only. */
  async end(sessionId: string): Promise<void> {
    await this.db.query('UPDATE portal_sessions SET ended_at = now() WHERE id = $1 AND ended_at IS NULL', [sessionId]);
  }

  /** Every live session of the partner, inside the change's transaction; how many there were. */
  async endAll(m: EntityManager, partnerId: string): Promise<number> {
    const [, count]: [unknown, number] = await m.query('UPDATE portal_sessions SET ended_at = now() WHERE partner_id = $1 AND ended_at IS NULL', [partnerId]);
    return count;
  }
}
