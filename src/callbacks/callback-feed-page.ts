/**
 * A page of a partner's feed, and the snapshot it was read in (feed-position.ts has the rule):
 * `horizon` is the snapshot's xmin (every transaction below it has ended), `xmax` the first
 * transaction id not handed out yet. One range of callbacks_feed_idx (partner, xact, seq): the
 * page's cost does not grow with the table.
 */
export const FEED_PAGE = `
  WITH h AS (SELECT pg_snapshot_xmin(s) AS horizon, pg_snapshot_xmax(s) AS xmax FROM pg_current_snapshot() AS s)
  SELECT h.xmax::text AS xmax, c.*
    FROM h LEFT JOIN LATERAL (
      SELECT c.id, c.seq::text AS seq, c.xact::text AS xact, c.partner_id AS "partnerId", c.company_id AS "companyId", c.message, c.url, c.body,
             c.status, c.attempt_count AS "attemptCount", c.next_attempt_at AS "nextAttemptAt", c.last_error AS "lastError",
             c.created_at AS "createdAt", c.delivered_at AS "deliveredAt", c.test
        FROM callbacks c
       WHERE c.partner_id = $1 AND NOT c.test AND (c.xact, c.seq) > ($2::xid8, $3::bigint) AND c.xact < h.horizon
       ORDER BY c.xact, c.seq
       LIMIT $4) c ON true`;
