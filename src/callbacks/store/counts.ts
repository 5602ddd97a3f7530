import { Injectable } from '@nestjs/common';
import { SqlPool } from '../../platform/index.js';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/**
 * How long the callback feed has been held back (store/feed-page.ts): the age of the oldest
 * transaction of this database that has a transaction id (it wrote, or may write, callbacks that
 * every later one must wait for), or of the oldest prepared one; 0 when none. A scan of the
 * server's backends, never of a table.
 */
const FEED_HELD = `(SELECT coalesce(extract(epoch FROM now() - least(
      (SELECT min(xact_start) FROM pg_stat_activity
        WHERE datname = current_database() AND backend_xid IS NOT NULL AND pid <> pg_backend_pid()),
      (SELECT min(prepared) FROM pg_prepared_xacts WHERE database = current_database()))), 0))`;

/**
 * What the alert rules (ops/alerts.yml) watch that no counter shows, read at scrape time in one
 * statement: each part an index probe or a scan of a small table (destinations, workers), never
 * of the callbacks backlog. (The count of open destinations is src/delivery/destinations' gauge; the
 * oldest due callback is the admission pass's, Metrics.noteOldestDue: walking the pending index
 * here would meet the dead entries a drain leaves, which admission skips by its floors.)
 */
export const STATE = `
  SELECT (SELECT count(*) FROM delivery_workers WHERE expires_at > now())::int AS workers,
         (SELECT coalesce(extract(epoch FROM now() - min(opened_at)), 0)
            FROM destinations WHERE opened_at IS NOT NULL)::float8 AS open_longest,
         ${FEED_HELD}::float8 AS feed_held`;

export interface DeliveryState {
  workers: number;
  open_longest: number;
  feed_held: number;
}

/**
 * Callbacks pending (sending included) and failed, each counted up to $1: an index scan each, stopped at the
 * cap (never a bitmap scan, which reads every match first).
 */
export const COUNT_PENDING_AND_FAILED = `
  SELECT (SELECT count(*) FROM (SELECT 1 FROM callbacks WHERE status IN ('pending', 'sending') LIMIT $1) p) AS pending,
         (SELECT count(*) FROM (SELECT 1 FROM callbacks WHERE status = 'failed' LIMIT $1) f) AS failed`;

/** The counts the metrics read at scrape time. */
@Injectable()
export class DeliveryCounts {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly sql: SqlPool,
  ) {}

  /**
   * The state the alert gauges show (workers alive, the longest open circuit, the feed held back), in one
   * statement.
   */
  async deliveryState(): Promise<DeliveryState> {
    const [row]: DeliveryState[] = await this.db.query(STATE);
    return row;
  }

  /**
   * Callbacks pending (sending included) and failed, each counted up to `cap` (a bounded index scan each: on
   * SqlPool's connections, whose plans read by index).
   */
  async countPendingAndFailed(cap: number): Promise<{ pending: number; failed: number }> {
    const {
      rows: [row],
    } = await this.sql.pool.query<{ pending: string; failed: string }>(COUNT_PENDING_AND_FAILED, [cap]);
    return { pending: Number(row.pending), failed: Number(row.failed) };
  }
}
