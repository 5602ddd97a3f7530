import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { AuditLog, type OperatorIdentity } from '../operators/index.js';
import { hashToken, safeEqual, TransactionRunner } from '../platform/index.js';
import { PORTAL_IDLE_MINUTES, PORTAL_MAX_HOURS, PortalSessionRepository } from './portal-session.repository.js';

export { PORTAL_IDLE_MINUTES, PORTAL_MAX_HOURS };

/**
 * Session cookies a request may present under the session's name (a same-site page can add its own
 * beside the browser's): the first few are looked up, the rest ignored.
 */
export const PORTAL_COOKIES_READ = 4;

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
    private readonly sessions: PortalSessionRepository,
    private readonly writes: TransactionRunner,
    private readonly audit: AuditLog,
  ) {}

  /** Opens a session for the partner inside `m` (the link's redemption); its id and cookie value. */
  async open(m: EntityManager, partnerId: string, operatorId: string | null): Promise<{ id: string; token: string }> {
    const token = newSessionToken();
    const csrfSecret = randomBytes(18).toString('base64url');
    const id = await this.sessions.open(m, hashToken(token), partnerId, csrfSecret, operatorId);
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
    const row = await this.sessions.find(hashes);
    if (!row || !hashes.some((h) => safeEqual(row.token_hash, h))) return null;
    const operator =
      row.operator_id === null ? null : { id: row.operator_id, name: row.operator_name!, role: row.operator_role! };
    return { id: row.id, partnerId: row.partner_id, csrfSecret: row.csrf_secret, operator };
  }

  /** Sign out: this session only; in an operator's session, audited naming the operator. */
  async end(session: PortalSession): Promise<void> {
    await this.writes.transaction(async (m) => {
      if (!(await this.sessions.end(m, session.id)) || !session.operator) return;
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
  endAll(m: EntityManager, partnerId: string): Promise<number> {
    return this.sessions.endAll(m, partnerId);
  }
}
