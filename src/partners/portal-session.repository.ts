import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { ClientBase } from 'pg';
import { DataSource, EntityManager } from 'typeorm';
import type { OperatorIdentity } from '../operators/index.js';

/** A session ends after this long without a request. */
export const PORTAL_IDLE_MINUTES = 30;
/** And this long after it began, used or not. */
export const PORTAL_MAX_HOURS = 8;

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
const PRUNE_PORTAL_SESSIONS = `
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

export interface FoundRow {
  id: string;
  partner_id: string;
  csrf_secret: string;
  token_hash: string;
  operator_id: string | null;
  operator_name: string | null;
  operator_role: OperatorIdentity['role'] | null;
}

/** The statements of portal_sessions, one method each. */
@Injectable()
export class PortalSessionRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** A new session's id. */
  async open(m: EntityManager, tokenHash: string, partnerId: string, csrfSecret: string, operatorId: string | null) {
    const [{ id }]: { id: string }[] = await m.query(
      `INSERT INTO portal_sessions (token_hash, partner_id, csrf_secret, operator_id)
       VALUES ($1, $2, $3, $4) RETURNING id`,
      [tokenHash, partnerId, csrfSecret, operatorId],
    );
    return id;
  }

  /** The one live session among the hashes, its idle time restarted; undefined when none (or more than one) is. */
  async find(hashes: string[]): Promise<FoundRow | undefined> {
    // An UPDATE's answer through TypeORM: [rows, affected].
    const [[row]]: [FoundRow[], number] = await this.db.query(FIND, [hashes]);
    return row;
  }

  /** Whether the session was live and is now ended. */
  async end(m: EntityManager, id: string): Promise<boolean> {
    const [, ended]: [unknown, number] = await m.query(
      'UPDATE portal_sessions SET ended_at = now() WHERE id = $1 AND ended_at IS NULL',
      [id],
    );
    return ended > 0;
  }

  /** How many of the partner's sessions ended. */
  async endAll(m: EntityManager, partnerId: string): Promise<number> {
    const [, count]: [unknown, number] = await m.query(
      'UPDATE portal_sessions SET ended_at = now() WHERE partner_id = $1 AND ended_at IS NULL',
      [partnerId],
    );
    return count;
  }

  /** Deletes up to `limit` sessions no longer live on the retention pass's connection; how many. */
  async prune(client: Pick<ClientBase, 'query'>, limit: number): Promise<number> {
    return (await client.query(PRUNE_PORTAL_SESSIONS, [limit])).rowCount ?? 0;
  }
}
