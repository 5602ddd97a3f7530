import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { type Actor, AuditLog } from '../operators/index.js';
import { APP_CONFIG, AppConfig, hashToken, notFound, TransactionRunner } from '../platform/index.js';
import { PortalLinkRepository, StateRow } from './portal-link.repository.js';
import { PartnerRepository } from './partner.repository.js';
import { PortalSessions } from './portal-sessions.js';

/** A link's lifetime when none is asked for. */
export const DEFAULT_PORTAL_LINK_MINUTES = 15;

/** The path a link opens; its `token` query parameter is a credential (never logged: platform/logging/redact.ts). */
export const PORTAL_LOGIN_PATH = '/portal/login';

/** A link's token: 256 random bits, stored as its SHA-256 only (as API keys are), shown once in the URL. */
const newLinkToken = () => `fsp_${randomBytes(32).toString('base64url')}`;

/** Why a link opens nothing (the page says which). */
export type LinkRefusal = 'used' | 'expired' | 'ended' | 'unknown';

/** A link that can still open a session, as its sign-in page shows it (nothing used). */
export interface UsableLink {
  partnerName: string;
  expiresAt: Date;
}

/**
 * One-time sign-in links to the partner portal: made by the partner (its API key) or an operator
 * (audited, and remembered: the session it opens is the operator's to account for), shown by
 * their sign-in page without being used, used once by its Sign in for a session, and ended with
 * the partner's sessions.
 */
@Injectable()
export class PortalLinks {
  constructor(
    private readonly links: PortalLinkRepository,
    private readonly partners: PartnerRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly writes: TransactionRunner,
    private readonly audit: AuditLog,
    private readonly sessions: PortalSessions,
  ) {}

  /** A link for the partner (its own request). */
  async create(partnerId: string, ttlMinutes: number): Promise<{ url: string; expiresAt: string }> {
    return this.insert(undefined, partnerId, ttlMinutes, null);
  }

  /** A link made by an operator for a partner, with its audit entry in the same transaction. */
  async createAs(actor: Actor, partnerId: string, ttlMinutes: number): Promise<{ url: string; expiresAt: string }> {
    return this.writes.transaction(async (m) => {
      if (!(await this.partners.existsIn(m, partnerId))) throw notFound('Partner');
      const link = await this.insert(m, partnerId, ttlMinutes, 'operator' in actor ? actor.operator.id : null);
      const after = { portalLinkExpiresAt: link.expiresAt };
      await this.audit.record(m, actor, { targetType: 'partner', targetId: partnerId, before: {}, after });
      return link;
    });
  }

  /** Ends every portal session and unused link of a partner (an operator's request), audited in that transaction. */
  async endSessionsAs(actor: Actor, partnerId: string): Promise<void> {
    await this.writes.transaction(async (m) => {
      if (!(await this.partners.existsIn(m, partnerId))) throw notFound('Partner');
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
    const links = await this.links.endUnused(m, partnerId);
    return { links, sessions: await this.sessions.endAll(m, partnerId) };
  }

  /** What a link's sign-in page shows, or why it opens nothing. Uses nothing: a preview or a scanner may fetch it. */
  async peek(token: string | undefined): Promise<UsableLink | { refused: LinkRefusal }> {
    if (!token || token.length > 200) return { refused: 'unknown' };
    const row = await this.links.state(hashToken(token));
    const refused = refusalOf(row);
    return refused || !row
      ? { refused: refused ?? 'unknown' }
      : { partnerName: row.partner_name, expiresAt: row.expires_at };
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
      const used = await this.links.use(m, hash);
      if (!used) {
        const row = await this.links.state(hash, m);
        return { refused: refusalOf(row) ?? 'used' };
      }
      const session = await this.sessions.open(m, used.partner_id, used.operator_id);
      if (used.operator_id !== null) await this.auditOpening(m, used.operator_id, used.partner_id, session.id);
      return { session: session.token };
    });
  }

  private async auditOpening(m: EntityManager, operatorId: string, partnerId: string, sessionId: string) {
    const operator = await this.links.operator(m, operatorId);
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

  private async insert(m: EntityManager | undefined, partnerId: string, ttlMinutes: number, operatorId: string | null) {
    const token = newLinkToken();
    const expiresAt = await this.links.insert(hashToken(token), partnerId, ttlMinutes, operatorId, m);
    const url = `${this.config.portalBaseUrl}${PORTAL_LOGIN_PATH}?token=${token}`;
    return { url, expiresAt: expiresAt.toISOString() };
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
