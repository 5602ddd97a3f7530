import { EntityManager } from 'typeorm';
import { noteDue } from '../../database/writes.js';
import { Callback } from '../callback.entity.js';

/**
 * How many test callbacks the partner had accepted in the last minute, and in how many seconds
 * the oldest of them leaves it (callbacks_test_recent_idx). Inside the transaction that records
 * one, under the partner's advisory lock, so two cannot both see room for one.
 */
export async function recentTests(m: EntityManager, partnerId: string, lockKey: number): Promise<{ n: number; free_in_s: number | null }> {
  await m.query(`SELECT pg_advisory_xact_lock($1, hashtext($2))`, [lockKey, partnerId]);
  const [recent]: { n: number; free_in_s: number | null }[] = await m.query(
    `SELECT count(*)::int AS n, ceil(extract(epoch FROM min(created_at) + interval '1 minute' - clock_timestamp()))::int AS free_in_s
       FROM callbacks WHERE partner_id = $1 AND test AND created_at > clock_timestamp() - interval '1 minute'`,
    [partnerId],
  );
  return recent;
}

export interface TestCallbackRow {
  partnerId: string;
  companyId: string;
  message: number;
  url: string;
  body: string;
}

/**
 * A test callback: an ordinary row whose schedule allows one attempt and that no feed lists. Due
 * now, or, while its destination's circuit is open, `failed` at once and unsent, its lastError
 * naming the circuit (read in the same transaction).
 */
export async function insertTestCallback(m: EntityManager, t: TestCallbackRow): Promise<Callback> {
  const [row]: { id: string; status: string }[] = await m.query(
    `WITH circuit AS (
       SELECT 'destination ' || origin || ' circuit open since ' || to_char(opened_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
              || coalesce(' (last error: ' || last_error || ')', '') || '; test callback not sent' AS open
         FROM destinations WHERE origin = callback_origin($4) AND opened_at IS NOT NULL)
     INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at, last_error, test, attempt_limit)
     SELECT $1, $2, $3, $4, $5, CASE WHEN c.open IS NULL THEN 'pending' ELSE 'failed' END, CASE WHEN c.open IS NULL THEN now() END, c.open, true, 1
       FROM (SELECT (SELECT open FROM circuit) AS open) c
     RETURNING id, status`,
    [t.partnerId, t.companyId, t.message, t.url, t.body],
  );
  if (row.status === 'pending') noteDue(m, 1);
  return m.findOneByOrFail(Callback, { id: row.id });
}
