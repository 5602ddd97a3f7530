import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { AuditLog, type OperatorIdentity } from '../operators/index.js';
import { hashToken, safeEqual, TransactionRunner } from '../platform/index.js';

/** A session ends after this long without a request. */
export const PORTAL_IDLE_MINUTES = 30;
/** And this long after it began, used or not. */
export const PORTAL_MAX_HOURS = 8;
/**
 * Session cookies a request may present under the session's name (a same-site page can add its own
 * beside the browser's): the first few are looked up, the rest ignored.
 */
export const PORTAL_COOKIES_READ = 4;

/**
 * A session row (alias `t`) still in use: not ended, used within PORTAL_IDLE_MINUTES, begun within
 * PORTAL_MAX_HOURS (PostgreSQL's clock).
 */
const live = (t: string) =>
  `${t}.ended_at IS NULL AND ${t}.last_seen_at > now() - make_interval(mins => ${PORTAL_IDLE_MINUTES})
   AND ${t}.created_at > now() - make_interval(hours => ${PORTAL_MAX_HOURS})`;

/**
 * Whether a link or session row (alias `t`) was made by no operator or by one not revoked: revoking
 * an operator ends the links it made and the sessions they opened.
 */
export const MADE_BY_ACTIVE = (t: string) =>
  `(${t}.operator_id IS NULL
    OR EXISTS (SELECT 1 FROM operators o WHERE o.id = ${t}.operator_id AND o.revoked_at IS NULL))`;

/**
 * Rows of sessions no longer live, a batch ($1 rows), for the retention pass
 * (src/operations/callback-retention.ts): a cookie of a deleted session meets the same 401 page as
 * one of an ended session. No index: the table holds the sessions begun in the last
 * PORTAL_MAX_HOURS and those that ended since the last pass, and a pass reads it whole; an index
 * on last use would cost every request its update.
 */
export const PRUNE_PORTAL_SESSIONS = `
  WITH doomed AS (SELECT id FROM portal_sessions WHERE NOT (${live('portal_sessions')}) LIMIT $1 FOR UPDATE SKIP LOCKED)
  DELETE FROM portal_sessions s USING doomed d WHERE s.id = d.id`;

/**
 * The one live session among the cookie values' hashes ($1), its idle time restarted; none when
 * none is live, or when more than one is (a page of the same site set one of its own beside the
 * browser's: whose portal it would be cannot be told, so it is neither).
 */
const FIND = `
  WITH found AS (
    SELECT s.id, o.id AS operator_id, o.name AS operator_name, o.role AS operator_role
      FROM portal_sessions s LEFT JOIN operators o ON o.id = s.operator_id
     WHERE s.token_hash = ANY ($1::text[]) AND ${live('s')} AND ${MADE_BY_ACTIVE('s')}
     LIMIT 2)
  UPDATE portal_sessions s SET last_seen_at = now()
    FROM found WHERE s.id = found.id AND (SELECT count(*) FROM found) = 1
  RETURNING s.id, s.partner_id, s.csrf_secret, s.token_hash,
            found.operator_id, found.operator_name, found.operator_role`;

interface FoundRow {
  id: string;
  partner_id: string;
  csrf_secret: string;
  token_hash: string;
  operator_id: string | null;
  operator_name: string | null;
  operator_role: OperatorIdentity['role'] | null;
}

/** A live portal session, as the access gate finds it for a request. */
export interface PortalSession {
  id: string;
  partnerId: string;
  /** The key of the session's CSRF tokens (@fastify/csrf-protection's secret): kept server-side only. */
  csrfSecret: string;
  /** The operator whose link opened it: each action in it is audited naming that operator. Null: the partner's own. */
  operator: OperatorIdentity | null;
}

/** A session's cookie value: 256 random bits, stored as its SHA-256 only (as API keys are). */
const newSessionToken = () => `fss_${randomBytes(32).toString('base64url')}`;

/**
 * The portal's server-side sessions (portal_sessions), one row per signed-in browser. Every request
 * reads its row (no cache), so ending a session — sign out, an operator's DELETE, an API-key
 * rotation without overlap, the revocation of the operator whose link opened it — holds for the
 * next request in every process.
 */
@Injectable()
export class PortalSessions {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly writes: TransactionRunner,
    private readonly audit: AuditLog,
  ) {}

  /** Opens a session for the partner inside `m` (the link's redemption); its id and cookie value. */
  async open(m: EntityManager, partnerId: string, operatorId: string | null): Promise<{ id: string; token: string }> {
    const token = newSessionToken();
    const [{ id }]: { id: string }[] = await m.query(
      `INSERT INTO portal_sessions (token_hash, partner_id, csrf_secret, operator_id)
       VALUES ($1, $2, $3, $4) RETURNING id`,
      [hashToken(token), partnerId, randomBytes(18).toString('base64url'), operatorId],
    );
    return { id, token };
  }

  /**
   * The live session of the request's cookie values, its idle time restarted; null when none is
   * live (unknown, ended, idle for {@link PORTAL_IDLE_MINUTES}, older than {@link PORTAL_MAX_HOURS},
   * its operator revoked) or more than one is. One statement on the token's unique index.
   */
  async find(tokens: string[]): Promise<PortalSession | null> {
    const hashes = tokens
      .filter((t) => t.length > 0 && t.length <= 200)
      .slice(0, PORTAL_COOKIES_READ)
      .map(hashToken);
    if (hashes.length === 0) return null;
    // An UPDATE's answer through TypeORM: [rows, affected].
    const [[row]]: [FoundRow[], number] = await this.db.query(FIND, [hashes]);
    if (!row || !hashes.some((h) => safeEqual(row.token_hash, h))) return null;
    const operator =
      row.operator_id === null ? null : { id: row.operator_id, name: row.operator_name!, role: row.operator_role! };
    return { id: row.id, partnerId: row.partner_id, csrfSecret: row.csrf_secret, operator };
  }

  /** Sign out: this session only; in an operator's session, audited naming the operator. */
  async end(session: PortalSession): Promise<void> {
    await this.writes.transaction(async (m) => {
      const [, ended]: [unknown, number] = await m.query(
        'UPDATE portal_sessions SET ended_at = now() WHERE id = $1 AND ended_at IS NULL',
        [session.id],
      );
      if (ended === 0 || !session.operator) return;
      await this.audit.record(
        m,
        { operator: session.operator, action: 'portal.session.end' },
        {
          targetType: 'partner',
          targetId: session.partnerId,
          before: { portalSession: session.id },
          after: { portalSession: null },
        },
      );
    });
  }

  /** Every live session of the partner, inside the change's transaction; how many there were. */
  async endAll(m: EntityManager, partnerId: string): Promise<number> {
    const [, count]: [unknown, number] = await m.query(
      'UPDATE portal_sessions SET ended_at = now() WHERE partner_id = $1 AND ended_at IS NULL',
      [partnerId],
    );
    return count;
  }
}
