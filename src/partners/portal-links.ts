import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { type Actor, AuditLog } from '../operators/index.js';
import { APP_CONFIG, AppConfig, hashToken, notFound, Writes } from '../platform/index.js';
import { PortalSessions } from './portal-sessions.js';

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
  WITH doomed AS (SELECT token_hash FROM portal_links WHERE expires_at < now() - interval '1 day' LIMIT $1 FOR UPDATE SKIP LOCKED)
  DELETE FROM portal_links l USING doomed d WHERE l.token_hash = d.token_hash`;

/** Why a link opened nothing (the page says which). */
export type LinkRefusal = 'used' | 'expired' | 'unknown';

/**
 * One-time sign-in links to the partner portal: made by the partner (its API key) or an operator
 * (audited), redeemed once for a session.
 */
@Injectable()
export class PortalLinks {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly writes: Writes,
    private readonly audit: AuditLog,
    private readonly sessions: PortalSessions,
  ) {}

  /** A link for the partner (its own request). */
  async create(partnerId: string, ttlMinutes: number): Promise<{ url: string; expiresAt: string }> {
    return this.insert(this.db.manager, partnerId, ttlMinutes);
  }

  /** A link made by an operator for a partner, with its audit entry in the same transaction. */
  async createAs(actor: Actor, partnerId: string, ttlMinutes: number): Promise<{ url: string; expiresAt: string }> {
    return this.writes.transaction(async (m) => {
      const [partner]: { id: string }[] = await m.query('SELECT id FROM partners WHERE id = $1', [partnerId]);
      if (!partner) throw notFound('Partner');
      const link = await this.insert(m, partnerId, ttlMinutes);
      await this.audit.record(m, actor, { targetType: 'partner', targetId: partnerId, before: {}, after: { portalLinkExpiresAt: link.expiresAt } });
      return link;
    });
  }

  /** Ends every portal session of a partner (an operator's request), audited in the same transaction. */
  async endSessionsAs(actor: Actor, partnerId: string): Promise<void> {
    await this.writes.transaction(async (m) => {
      const [partner]: { id: string }[] = await m.query('SELECT id FROM partners WHERE id = $1', [partnerId]);
      if (!partner) throw notFound('Partner');
      const ended = await this.sessions.endAll(m, partnerId);
      await this.audit.record(m, actor, { targetType: 'partner', targetId: partnerId, before: { portalSessionsEnded: 0 }, after: { portalSessionsEnded: ended } });
    });
  }

  /**
   * Redeems a link's token: marks it used and opens a session, in one transaction (the UPDATE's
   * row lock makes a second, concurrent use find it used). The session's cookie value, or why not.
   */
  async redeem(token: string | undefined): Promise<{ session: string } | { refused: LinkRefusal }> {
    if (!token || token.length > 200) return { refused: 'unknown' };
    const hash = hashToken(token);
    return this.db.transaction(async (m) => {
      // An UPDATE's answer through TypeORM: [rows, affected].
      const [[used]]: [{ partner_id: string }[], number] = await m.query(
        'UPDATE portal_links SET used_at = now() WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now() RETURNING partner_id',
        [hash],
      );
      if (used) return { session: await this.sessions.open(m, used.partner_id) };
      const [link]: { used_at: Date | null }[] = await m.query('SELECT used_at FROM portal_links WHERE token_hash = $1', [hash]);
      return { refused: !link ? 'unknown' : link.used_at ? 'used' : 'expired' };
    });
  }

  private async insert(m: DataSource['manager'], partnerId: string, ttlMinutes: number) {
    const token = newLinkToken();
    const [row]: { expires_at: Date }[] = await m.query(
      'INSERT INTO portal_links (token_hash, partner_id, expires_at) VALUES ($1, $2, now() + make_interval(mins => $3)) RETURNING expires_at',
      [hashToken(token), partnerId, ttlMinutes],
    );
    return { url: `${this.config.portalBaseUrl}${PORTAL_LOGIN_PATH}?token=${token}`, expiresAt: row.expires_at.toISOString() };
  }
}
