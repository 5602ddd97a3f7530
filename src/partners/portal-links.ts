import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { type Actor, AuditLog, type OperatorIdentity } from '../operators/index.js';
import { APP_CONFIG, AppConfig, hashToken, notFound, TransactionRunner } from '../platform/index.js';
import { MADE_BY_ACTIVE, PortalSessions } from './portal-sessions.js';

/** A link's lifetime when none is asked for. */
export const DEFAULT_PORTAL_LINK_MINUTES = 15;

/** The path a link opens; its `token` query parameter is a credential (never logged: platform/logging/redact.ts). */
export const PORTAL_LOGIN_PATH = '/portal/login';

/** A link's token: 256 random bits, stored as its SHA-256 only (as API keys are), shown once in the URL. */
const newLinkToken = () => `fsp_${randomBytes(32).toString('base64url')}`;

/**
 * Links expired over a day ago, a batch ($1 rows), for the retention pass (src/operations/callback-retention.ts): for a
 * day a late click still reads "expired" (or "used already"), not "not a sign-in link". A range of
 * `portal_links_expires_idx`.
 */
export const PRUNE_PORTAL_LINKS = `
  WITH doomed AS (SELECT token_hash FROM portal_links WHERE expires_at < now() - interval '1 day'
                  LIMIT $1 FOR UPDATE SKIP LOCKED)
  DELETE FROM portal_links l USING doomed d WHERE l.token_hash = d.token_hash`;

/** A link's state, by its token's hash (PostgreSQL's clock): what its page says, whether it can open a session. */
const LINK_STATE = `
  SELECT p.name AS partner_name, l.expires_at, l.used_at IS NOT NULL AS used, l.expires_at <= now() AS expired,
         l.ended_at IS NOT NULL OR NOT ${MADE_BY_ACTIVE('l')} AS ended
    FROM portal_links l JOIN partners p ON p.id = l.partner_id
   WHERE l.token_hash = $1`;

/** Uses a link that can open a session: unused, not ended, not expired, its operator (if any) not revoked. */
const USE_LINK = `
  UPDATE portal_links l SET used_at = now()
   WHERE l.token_hash = $1 AND l.used_at IS NULL AND l.ended_at IS NULL AND l.expires_at > now()
     AND ${MADE_BY_ACTIVE('l')}
  RETURNING l.partner_id, l.operator_id`;

/** Why a link opens nothing (the page says which). */
export type LinkRefusal = 'used' | 'expired' | 'ended' | 'unknown';

/** A link that can still open a session, as its sign-in page shows it (nothing used). */
export interface UsableLink {
  partnerName: string;
  expiresAt: Date;
}

type StateRow = { partner_name: string; expires_at: Date; used: boolean; expired: boolean; ended: boolean };

/**
 * One-time sign-in links to the partner portal: made by the partner (its API key) or an operator
 * (audited, and remembered: the session it opens is the operator's to account for), shown by
 * their sign-in page without being used, used once by its Sign in for a session, and ended with
 * the partner's sessions.
 */
@Injectable()
export class PortalLinks {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly writes: TransactionRunner,
    private readonly audit: AuditLog,
    private readonly sessions: PortalSessions,
  ) {}

  /** A link for the partner (its own request). */
  async create(partnerId: string, ttlMinutes: number): Promise<{ url: string; expiresAt: string }> {
    return this.insert(this.db.manager, partnerId, ttlMinutes, null);
  }

  /** A link made by an operator for a partner, with its audit entry in the same transaction. */
  async createAs(actor: Actor, partnerId: string, ttlMinutes: number): Promise<{ url: string; expiresAt: string }> {
    return this.writes.transaction(async (m) => {
      const [partner]: { id: string }[] = await m.query('SELECT id FROM partners WHERE id = $1', [partnerId]);
      if (!partner) throw notFound('Partner');
      const link = await this.insert(m, partnerId, ttlMinutes, 'operator' in actor ? actor.operator.id : null);
      const after = { portalLinkExpiresAt: link.expiresAt };
      await this.audit.record(m, actor, { targetType: 'partner', targetId: partnerId, before: {}, after });
      return link;
    });
  }

  /** Ends every portal session and unused link of a partner (an operator's request), audited in that transaction. */
  async endSessionsAs(actor: Actor, partnerId: string): Promise<void> {
    await this.writes.transaction(async (m) => {
      const [partner]: { id: string }[] = await m.query('SELECT id FROM partners WHERE id = $1', [partnerId]);
      if (!partner) throw notFound('Partner');
      const ended = await this.endAll(m, partnerId);
      await this.audit.record(m, actor, {
        targetType: 'partner',
        targetId: partnerId,
        before: { portalSessionsEnded: 0, portalLinksEnded: 0 },
        after: { portalSessionsEnded: ended.sessions, portalLinksEnded: ended.links },
      });
    });
  }

  /**
   * Inside a revocation's transaction: every unused link of the partner ends, then every session.
   * Links first: a Sign in under way holds its link's row, so this waits for it and then ends the
   * session it opened; one that comes after finds its link ended.
   */
  async endAll(m: EntityManager, partnerId: string): Promise<{ sessions: number; links: number }> {
    const [, links]: [unknown, number] = await m.query(
      `UPDATE portal_links SET ended_at = now()
        WHERE partner_id = $1 AND used_at IS NULL AND ended_at IS NULL AND expires_at > now()`,
      [partnerId],
    );
    return { links, sessions: await this.sessions.endAll(m, partnerId) };
  }

  /** What a link's sign-in page shows, or why it opens nothing. Uses nothing: a preview or a scanner may fetch it. */
  async peek(token: string | undefined): Promise<UsableLink | { refused: LinkRefusal }> {
    if (!token || token.length > 200) return { refused: 'unknown' };
    const [row]: StateRow[] = await this.db.query(LINK_STATE, [hashToken(token)]);
    const refused = refusalOf(row);
    return refused ? { refused } : { partnerName: row.partner_name, expiresAt: row.expires_at };
  }

  /**
   * Uses a link's token: marks it used and opens a session, in one transaction (the UPDATE's row
   * lock makes a second, concurrent use find it used); an operator's link writes the session's
   * opening into the audit log naming that operator. The session's cookie value, or why not.
   */
  async redeem(token: string | undefined): Promise<{ session: string } | { refused: LinkRefusal }> {
    if (!token || token.length > 200) return { refused: 'unknown' };
    const hash = hashToken(token);
    return this.writes.transaction(async (m) => {
      // An UPDATE's answer through TypeORM: [rows, affected].
      const [[used]]: [{ partner_id: string; operator_id: string | null }[], number] = await m.query(USE_LINK, [hash]);
      if (!used) {
        const [row]: StateRow[] = await m.query(LINK_STATE, [hash]);
        return { refused: refusalOf(row) ?? 'used' };
      }
      const session = await this.sessions.open(m, used.partner_id, used.operator_id);
      if (used.operator_id !== null) await this.auditOpening(m, used.operator_id, used.partner_id, session.id);
      return { session: session.token };
    });
  }

  private async auditOpening(m: EntityManager, operatorId: string, partnerId: string, sessionId: string) {
    const [operator]: OperatorIdentity[] = await m.query('SELECT id, name, role FROM operators WHERE id = $1', [
      operatorId,
    ]);
    await this.audit.record(
      m,
      { operator, action: 'portal.session.open' },
      {
        targetType: 'partner',
        targetId: partnerId,
        before: { portalSession: null },
        after: { portalSession: sessionId },
      },
    );
  }

  private async insert(m: EntityManager, partnerId: string, ttlMinutes: number, operatorId: string | null) {
    const token = newLinkToken();
    const [row]: { expires_at: Date }[] = await m.query(
      `INSERT INTO portal_links (token_hash, partner_id, expires_at, operator_id)
       VALUES ($1, $2, now() + make_interval(mins => $3), $4) RETURNING expires_at`,
      [hashToken(token), partnerId, ttlMinutes, operatorId],
    );
    const url = `${this.config.portalBaseUrl}${PORTAL_LOGIN_PATH}?token=${token}`;
    return { url, expiresAt: row.expires_at.toISOString() };
  }
}

/** Why a link in this state opens nothing; null when it can open a session. */
function refusalOf(row: StateRow | undefined): LinkRefusal | null {
  if (!row) return 'unknown';
  if (row.used) return 'used';
  if (row.ended) return 'ended';
  if (row.expired) return 'expired';
  return null;
}
