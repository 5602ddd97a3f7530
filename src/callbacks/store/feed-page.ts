import type { Pool } from 'pg';
import { Injectable } from '@nestjs/common';
import { SqlPool } from '../../platform/index.js';
import type { Callback } from '../callback.entity.js';

/**
 * A page of a partner's feed (feed-position.ts has the rule), and the snapshot it was read in.
 *
 * `horizon`: every callback of a transaction below it that will ever be visible is visible to
 * this statement's snapshot. It is the smallest transaction the snapshot saw in progress
 * (`pg_snapshot_xip`) — leaving out those pg_stat_activity shows working in another database of
 * the cluster, which cannot write this table — or, with none, the snapshot's `xmax` (the first id
 * not handed out yet). A transaction the view does not place (it ended meanwhile, is prepared, or
 * is hidden from this role) counts: the horizon is never too high, at worst a moment late.
 *
 * One range of callbacks_feed_idx (partner, xact, seq): the page's cost does not grow with the
 * table.
 */
export const FEED_PAGE = `
  WITH snap AS MATERIALIZED (SELECT pg_current_snapshot() AS s),
  h AS (
    SELECT coalesce((SELECT min(x) FROM pg_snapshot_xip(snap.s) AS x
                      WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity a
                                         WHERE a.backend_xid = xid(x) AND a.datname <> current_database())),
                    pg_snapshot_xmax(snap.s)) AS horizon,
           pg_snapshot_xmax(snap.s) AS xmax
      FROM snap)
  SELECT h.xmax::text AS xmax, c.*
    FROM h LEFT JOIN LATERAL (
      SELECT c.id, c.seq::text AS seq, c.xact::text AS xact, c.partner_id AS "partnerId", c.company_id AS "companyId",
             c.message, c.url, c.body,
             c.destination,
             c.status, c.attempt_count AS "attemptCount", c.next_attempt_at AS "nextAttemptAt",
             c.last_error AS "lastError",
             c.created_at AS "createdAt", c.delivered_at AS "deliveredAt", c.test
        FROM callbacks c
       WHERE c.partner_id = $1 AND NOT c.test AND c.event_type IS NULL AND (c.xact, c.seq) > ($2::xid8, $3::bigint)
         AND c.xact < h.horizon
       ORDER BY c.xact, c.seq
       LIMIT $4) c ON true`;

/** A row of a feed page: a callback (all null past the last one) with its position, and the snapshot's xmax. */
export type FeedRow = Partial<Callback> & { xmax: string; xact: string | null; seq: string | null };

/** The partners' feed, on SqlPool's connections (prepared, planned by index: the plans tests check FEED_PAGE there). */
@Injectable()
export class FeedStore {
  private readonly pool: Pool;

  constructor(sql: SqlPool) {
    this.pool = sql.pool;
  }

  /**
   * Up to `limit` of the partner's callbacks after the position (xact, seq); at least one row, for the
   * snapshot's xmax.
   */
  async page(partnerId: string, after: { xact: bigint; seq: bigint }, limit: number): Promise<FeedRow[]> {
    return (
      await this.pool.query<FeedRow>({
        name: 'callback-feed-page',
        text: FEED_PAGE,
        values: [partnerId, after.xact.toString(), after.seq.toString(), limit],
      })
    ).rows;
  }
}
