import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { ClientBase } from 'pg';
import { DataSource, EntityManager } from 'typeorm';
import type { OperatorIdentity } from '../operators/index.js';
import { MADE_BY_ACTIVE } from './portal-session.repository.js';

/**
 * Links expired over a day ago, a batch ($1 rows), for the retention pass (src/operations/callback-retention.ts): for a
 * day a late click still reads "expired" (or "used already"), not "not a sign-in link". A range of
 * `portal_links_expires_idx`.
 */
const PRUNE_PORTAL_LINKS = `
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

export type StateRow = { partner_name: string; expires_at: Date; used: boolean; expired: boolean; ended: boolean };

/** The statements of portal_links, one method each. */
@Injectable()
export class PortalLinkRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** A new link's expiry (inside `m`'s transaction when given). */
  async insert(
    tokenHash: string,
    partnerId: string,
    ttlMinutes: number,
    operatorId: string | null,
    m: EntityManager = this.db.manager,
  ): Promise<Date> {
    const [row]: { expires_at: Date }[] = await m.query(
      `INSERT INTO portal_links (token_hash, partner_id, expires_at, operator_id)
       VALUES ($1, $2, now() + make_interval(mins => $3), $4) RETURNING expires_at`,
      [tokenHash, partnerId, ttlMinutes, operatorId],
    );
    return row.expires_at;
  }

  /** Ends the partner's unused links; how many. */
  async endUnused(m: EntityManager, partnerId: string): Promise<number> {
    const [, links]: [unknown, number] = await m.query(
      `UPDATE portal_links SET ended_at = now()
        WHERE partner_id = $1 AND used_at IS NULL AND ended_at IS NULL AND expires_at > now()`,
      [partnerId],
    );
    return links;
  }

  /** A link's state by its token's hash (inside `m`'s transaction when given). */
  async state(tokenHash: string, m: EntityManager = this.db.manager): Promise<StateRow | undefined> {
    const [row]: StateRow[] = await m.query(LINK_STATE, [tokenHash]);
    return row;
  }

  /** Uses a link that can open a session; undefined when it cannot. */
  async use(m: EntityManager, tokenHash: string) {
    // An UPDATE's answer through TypeORM: [rows, affected].
    const [[used]]: [{ partner_id: string; operator_id: string | null }[], number] = await m.query(USE_LINK, [
      tokenHash,
    ]);
    return used;
  }

  /** The operator whose link opened a session, as its audit entry names it. */
  async operator(m: EntityManager, operatorId: string): Promise<OperatorIdentity> {
    const [operator]: OperatorIdentity[] = await m.query('SELECT id, name, role FROM operators WHERE id = $1', [
      operatorId,
    ]);
    return operator;
  }

  /** Deletes up to `limit` links expired over a day ago on the retention pass's connection; how many. */
  async prune(client: Pick<ClientBase, 'query'>, limit: number): Promise<number> {
    return (await client.query(PRUNE_PORTAL_LINKS, [limit])).rowCount ?? 0;
  }
}
