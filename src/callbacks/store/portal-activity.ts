import { Injectable } from '@nestjs/common';
import { SqlPool } from '../../platform/index.js';

/** One hour of the portal's chart: attempts started in it that succeeded (2xx) and that failed. */
export interface ActivityHour {
  hour: Date;
  succeeded: number;
  failed: number;
}

/** A partner's last 24 hours: attempts per hour, and its callbacks attempted then that are now delivered or failed. */
export interface PartnerActivity {
  hours: ActivityHour[];
  delivered: number;
  failed: number;
}

/**
 * The partner's attempts since the start of the hour 23 hours ago (24 hourly buckets, the current
 * one included): one range of `callback_attempts_partner_started_idx (partner_id, started_at)`, so
 * it reads this partner's attempts of the day and nothing else, whatever the other partners' traffic
 * or this partner's older history. Each attempt's callback (its status, and whether it is an
 * operational event's delivery) is read by its primary key, in a LATERAL subquery fenced by
 * OFFSET 0: joined freely, a plan could start from the partner's callbacks, every one it has kept.
 * The overview reads it once a page.
 */
export const PARTNER_ACTIVITY = `
  WITH span AS (SELECT date_trunc('hour', now()) - interval '23 hours' AS since),
  attempts AS (
    SELECT date_trunc('hour', a.started_at) AS hour, coalesce(a.status_code BETWEEN 200 AND 299, false) AS ok,
           c.id, c.status
      FROM callback_attempts a
      CROSS JOIN LATERAL (SELECT id, status, event_type FROM callbacks WHERE id = a.callback_id OFFSET 0) c
     WHERE a.partner_id = $1 AND a.started_at >= (SELECT since FROM span) AND c.event_type IS NULL)
  SELECT h.hour,
         (SELECT count(*) FROM attempts x WHERE x.hour = h.hour AND x.ok)::int AS succeeded,
         (SELECT count(*) FROM attempts x WHERE x.hour = h.hour AND NOT x.ok)::int AS failed,
         (SELECT count(DISTINCT id) FROM attempts WHERE status = 'delivered')::int AS delivered_callbacks,
         (SELECT count(DISTINCT id) FROM attempts WHERE status = 'failed')::int AS failed_callbacks
    FROM generate_series((SELECT since FROM span), date_trunc('hour', now()), interval '1 hour') AS h(hour)
   ORDER BY h.hour`;

interface Row {
  hour: Date;
  succeeded: number;
  failed: number;
  delivered_callbacks: number;
  failed_callbacks: number;
}

/**
 * When each of the partner's destinations last failed with the error it shows (destinations.last_error,
 * as settlement wrote it: the attempt's error, or `HTTP <status>`), if within the chart's 24 hours:
 * the same range of the partner's attempts as {@link PARTNER_ACTIVITY}, each attempt's callback
 * by its key (fenced, as there), grouped by destination and error; an error older than the range
 * has no time here (the overview says so).
 */
export const LAST_ERROR_TIMES = `
  WITH failures AS (
    SELECT c.destination AS key, coalesce(a.error, 'HTTP ' || a.status_code) AS error, max(a.started_at) AS at
      FROM callback_attempts a
      CROSS JOIN LATERAL (SELECT destination FROM callbacks WHERE id = a.callback_id OFFSET 0) c
     WHERE a.partner_id = $1 AND a.started_at >= date_trunc('hour', now()) - interval '23 hours'
       AND NOT coalesce(a.status_code BETWEEN 200 AND 299, false)
     GROUP BY 1, 2)
  SELECT d.origin, f.at FROM destinations d JOIN failures f ON f.key = d.key AND f.error = d.last_error
   WHERE d.partner_id = $1`;

/** What the portal's home page shows of a partner's callbacks. */
@Injectable()
export class PortalActivityRepository {
  constructor(private readonly sql: SqlPool) {}

  /** The partner's last 24 hours (on SqlPool's connections, which plan by index whatever the statistics). */
  async partnerActivity(partnerId: string): Promise<PartnerActivity> {
    const { rows } = await this.sql.pool.query<Row>(PARTNER_ACTIVITY, [partnerId]);
    return {
      hours: rows.map((r) => ({ hour: r.hour, succeeded: r.succeeded, failed: r.failed })),
      delivered: rows[0]?.delivered_callbacks ?? 0,
      failed: rows[0]?.failed_callbacks ?? 0,
    };
  }

  /** Each destination's (by origin) last error's time, when within the last 24 hours. */
  async lastErrorTimes(partnerId: string): Promise<Map<string, Date>> {
    const { rows } = await this.sql.pool.query<{ origin: string; at: Date }>(LAST_ERROR_TIMES, [partnerId]);
    return new Map(rows.map((r) => [r.origin, r.at]));
  }
}
