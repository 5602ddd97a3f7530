import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { noteDue } from '../../platform/index.js';
import { REDELIVERABLE } from '../redelivery-rules.js';
import { askProbes, RESET } from './repairs.js';

/** Which failed callbacks a bulk redelivery takes; every property narrows it. */
export interface ReplaySelection {
  partnerId?: string;
  companyId?: string;
  /** Created at or after. */
  since?: Date;
  /** Created before. */
  until?: Date;
  /** The callback URL's origin (callback-destination.ts). */
  origin?: string;
}

/**
 * The conditions of a selection, only those given, so that the planner sees each one as it is
 * (`callbacks_failed_idx` for a partner's window, `callbacks_company_seq_idx` for a company's).
 * The origin is the URL's, through the same SQL function as `callbacks.destination`: what a
 * destination is keyed by may grow (a partner per destination), a URL's origin does not.
 * Operational events' deliveries are events (repaired as such), not callbacks.
 */
function conditions(s: ReplaySelection): { where: string; params: unknown[] } {
  const params: unknown[] = [];
  const where = [`c.status = 'failed'`, `c.event_type IS NULL`, REDELIVERABLE];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    where.push(sql.replace('?', `$${params.length}`));
  };
  if (s.partnerId) add('c.partner_id = ?::uuid', s.partnerId);
  if (s.companyId) add('c.company_id = ?::uuid', s.companyId);
  if (s.since) add('c.created_at >= ?::timestamptz', s.since);
  if (s.until) add('c.created_at < ?::timestamptz', s.until);
  if (s.origin) add('callback_origin(c.url) = ?::text', s.origin);
  return { where: where.join(' AND '), params };
}

/**
 * The bulk statement: restarts the selected failed callbacks' schedules (same ids: the same
 * webhook-ids), due now, bounded: it locks at most `limit + 1` of them and moves them only when
 * they are at most `limit`; of each open destination among them, the oldest is asked to go as its
 * next probe (askProbes). Yields how many matched (up to `limit + 1`) and how many moved (0 when over).
 */
export function replayStatement(s: ReplaySelection, limit: number): { text: string; params: unknown[] } {
  const { where, params } = conditions(s);
  const cap = `$${params.length + 1}`;
  return {
    text: `WITH picked AS (SELECT c.id FROM callbacks c WHERE ${where} LIMIT ${cap}::int + 1 FOR UPDATE OF c),
          size AS (SELECT count(*)::int AS n FROM picked),
          moved AS (UPDATE callbacks u SET ${RESET}, restarted_by = 'replay' FROM picked
                     WHERE u.id = picked.id AND (SELECT n FROM size) <= ${cap}::int
                    RETURNING u.id, u.destination, u.seq),
          asked AS (${askProbes('moved')})
     SELECT (SELECT n FROM size) AS matched, (SELECT count(*)::int FROM moved) AS moved`,
    params: [...params, limit],
  };
}

/** The count of {@link ReplayRepository.countReplayable}: the selection's failed callbacks, up to `limit + 1`. */
export function countStatement(s: ReplaySelection, limit: number): { text: string; params: unknown[] } {
  const { where, params } = conditions(s);
  return {
    text: `SELECT count(*)::int AS n
             FROM (SELECT 1 FROM callbacks c WHERE ${where} LIMIT $${params.length + 1}::int + 1) x`,
    params: [...params, limit],
  };
}

/** A bulk redelivery's statements, in its transaction. */
@Injectable()
export class ReplayRepository {
  /** Runs {@link replayStatement}: how many matched and how many moved. */
  async replayFailed(m: EntityManager, s: ReplaySelection, limit: number): Promise<{ matched: number; moved: number }> {
    const { text, params } = replayStatement(s, limit);
    const [row]: { matched: number; moved: number }[] = await m.query(text, params);
    noteDue(m, row.moved);
    return row;
  }

  /** How many failed callbacks a replay of this selection would take, counted up to `limit + 1`. */
  async countReplayable(m: EntityManager, s: ReplaySelection, limit: number): Promise<number> {
    const { text, params } = countStatement(s, limit);
    const [row]: { n: number }[] = await m.query(text, params);
    return row.n;
  }
}
