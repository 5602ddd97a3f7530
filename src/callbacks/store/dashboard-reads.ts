import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../../platform/index.js';
import type { Circuit } from '../circuit-wait.js';
import { originOfKeySql } from './operational-events.js';

/**
 * What the queue dashboard reads, all from PostgreSQL (the record of every callback; Redis holds
 * only the jobs admitted to workers). Every query is an index range scan of bounded length:
 * counts stop at {@link DASHBOARD_COUNT_CAP}, pages are short, and each tab's rows are read in
 * the order of an index:
 * - active, failed: `callbacks_status_seq_idx (status, seq)`;
 * - waiting, delayed: `callbacks_pending_due_utc_idx ((next_attempt_at AT TIME ZONE 'UTC')) WHERE status = 'pending'`
 *   (the due time's UTC form: an expression only these queries state, so admission never reads
 *   this index; see its migration);
 * - completed: `callbacks_delivered_at_idx (delivered_at) WHERE status = 'delivered'`;
 * - the last attempt and the log: `callback_attempts_callback_idx (callback_id, number)`.
 */

/** The dashboard's tabs (bull-board's job states that hold callbacks). */
export type DashboardTab = 'active' | 'waiting' | 'completed' | 'failed' | 'delayed';

/** A callback as the dashboard shows it. */
export interface DashboardRow {
  id: string;
  /** Null on an operational event's delivery (eventType), which has no message and no company. */
  message: number | null;
  companyId: string | null;
  /** Whose it is: the partner's name. */
  partnerName: string;
  /** The operational event this row delivers (`destination.failing`, …), or null for a callback. */
  eventType: string | null;
  /** Its destination's origin (of callbacks.destination, the partner's id and the origin): a job names no key. */
  destination: string;
  status: string;
  attemptCount: number;
  nextAttemptAt: Date | null;
  lastError: string | null;
  createdAt: Date;
  deliveredAt: Date | null;
  /** Creation or the last redelivery: attempts before it belong to an earlier schedule. */
  scheduleStartedAt: Date;
  /** Attempts of the current schedule (a probe of an open destination is not counted). */
  scheduleAttempts: number;
  lastAttemptStartedAt: Date | null;
  lastAttemptDurationMs: number | null;
  /** Its destination's circuit while open (times in ms), null while closed: why a pending one waits, until when. */
  circuit: Circuit | null;
}

/** One row of callback_attempts. */
export interface AttemptRow {
  number: number;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  sourceAddress: string | null;
}

/** The tabs a callback can be on; `unknown` for a status this code does not know. */

export const DASHBOARD_TABS: DashboardTab[] = ['active', 'waiting', 'completed', 'failed', 'delayed'];

/** How far a tab's count goes (as the callbacks gauge, metrics.ts): at the cap, at least that many. */
export const DASHBOARD_COUNT_CAP = 100_000;
/** The Logs tab shows at most this many attempts, the latest. */
export const LOG_ATTEMPTS = 1000;

/** Delivered callbacks stay on the Completed tab: at most `count`, delivered within `ageMs`. */
export interface CompletedWindow {
  count: number;
  ageMs: number;
}

/**
 * Each tab's rows (`age`: the placeholder of the completed window's age in ms), in the order of
 * the index that holds them, so a count or a page stops after its LIMIT's worth of index entries.
 * Equal keys come in the index's (stable) order: no tie-breaker, which would add a sort.
 */
const DUE_UTC = `(next_attempt_at AT TIME ZONE 'UTC')`;
const NOW_UTC = `(now() AT TIME ZONE 'UTC')`;
const TABS: Record<DashboardTab, { where: (age: string) => string; key: string; dir: 'ASC' | 'DESC' }> = {
  active: { where: () => `status = 'sending'`, key: 'seq', dir: 'ASC' },
  waiting: { where: () => `status = 'pending' AND ${DUE_UTC} <= ${NOW_UTC}`, key: DUE_UTC, dir: 'ASC' },
  delayed: { where: () => `status = 'pending' AND ${DUE_UTC} > ${NOW_UTC}`, key: DUE_UTC, dir: 'ASC' },
  completed: {
    where: (age) => `status = 'delivered' AND delivered_at >= now() - ${age} * interval '1 millisecond'`,
    key: 'delivered_at',
    dir: 'DESC',
  },
  failed: { where: () => `status = 'failed'`, key: 'seq', dir: 'DESC' },
};
const orderOf = (tab: DashboardTab) => `${TABS[tab].key} ${TABS[tab].dir}`;

/** The callbacks columns a page reads (not the body). */
const ROW = `id, seq, message, company_id, destination, status, attempt_count, next_attempt_at, last_error,
  created_at, delivered_at,
  schedule_started_at, schedule_attempts, partner_id, event_type`;
/** Whose the row is (its partner's name, by the partners key: a lookup per row shown), and the event it delivers. */
const WHO = `(SELECT name FROM partners WHERE id = c.partner_id) AS "partnerName", c.event_type AS "eventType"`;
const COLUMNS = `c.id, c.message, c.company_id AS "companyId", ${originOfKeySql('c.destination')} AS destination,
  c.status, c.attempt_count AS "attemptCount",
  c.next_attempt_at AS "nextAttemptAt", c.last_error AS "lastError", c.created_at AS "createdAt",
  c.delivered_at AS "deliveredAt",
  c.schedule_started_at AS "scheduleStartedAt", c.schedule_attempts AS "scheduleAttempts",
  a.started_at AS "lastAttemptStartedAt", a.duration_ms AS "lastAttemptDurationMs", ${WHO},
  CASE WHEN d.opened_at IS NOT NULL THEN json_build_object(
    'openedAt', (extract(epoch FROM d.opened_at) * 1000)::float8,
    'nextProbeAt', (extract(epoch FROM d.next_probe_at) * 1000)::float8,
    'probeAsked', d.probe_id IS NOT NULL) END AS circuit`;
/** The last attempt and the destination's circuit (by its key: one primary-key probe), of each row. */
const LAST_ATTEMPT = `LEFT JOIN LATERAL (
  SELECT started_at, duration_ms FROM callback_attempts WHERE callback_id = c.id ORDER BY number DESC LIMIT 1) a ON true
  LEFT JOIN destinations d ON d.key = c.destination`;

export const ONE_ROW = `SELECT ${COLUMNS}, now() AS "readAt" FROM callbacks c ${LAST_ATTEMPT} WHERE c.id = $1`;

/** Each tab's count, up to the cap ($2; the completed tab's $3, its age $1), in one statement. */
export const COUNTS = `SELECT ${DASHBOARD_TABS.map((t) => {
  const cap = t === 'completed' ? '$3' : '$2';
  return `(SELECT count(*) FROM (SELECT 1 FROM callbacks WHERE ${TABS[t].where('$1')}
    ORDER BY ${orderOf(t)} LIMIT ${cap}) x) AS ${t}`;
}).join(',\n')}`;

/**
 * A page of each tab ($1 rows from $2 on; the completed tab's age $3). The key goes out with the
 * rows, so the outer ORDER BY is the order they come in: no sort.
 */
export const PAGES = Object.fromEntries(
  DASHBOARD_TABS.map((tab) => {
    const { where, key, dir } = TABS[tab];
    return [
      tab,
      `SELECT ${COLUMNS}, now() AS "readAt"
         FROM (SELECT ${ROW}, ${key} AS sort_key FROM callbacks WHERE ${where('$3')}
                ORDER BY ${key} ${dir} LIMIT $1 OFFSET $2) c ${LAST_ATTEMPT}
        ORDER BY c.sort_key ${dir}`,
    ];
  }),
) as Record<DashboardTab, string>;

export const LOG = `SELECT number, started_at AS "startedAt", duration_ms AS "durationMs", status_code AS "statusCode",
                  error, source_address AS "sourceAddress"
           FROM callback_attempts WHERE callback_id = $1 ORDER BY number DESC LIMIT $2`;

export const DELAYED_IDS = `SELECT id FROM callbacks WHERE ${TABS.delayed.where('')}
  ORDER BY ${orderOf('delayed')} LIMIT $1`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** PostgreSQL's clock at the read: a pending row is delayed or waiting by it. */
type ReadAt = { now: Date };

@Injectable()
export class DashboardStore {
  private readonly completed: CompletedWindow;

  constructor(
    @InjectDataSource() private readonly db: Pick<DataSource, 'query' | 'transaction'>,
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'dashboardKeep'>,
  ) {
    this.completed = config.dashboardKeep.completed;
  }

  /** The number of callbacks on each tab, each counted up to the cap. */
  async counts(): Promise<Record<DashboardTab, number>> {
    const [row]: Record<DashboardTab, string>[] = await this.db.query(COUNTS, [
      this.completed.ageMs,
      DASHBOARD_COUNT_CAP,
      Math.min(this.completed.count, DASHBOARD_COUNT_CAP),
    ]);
    return Object.fromEntries(DASHBOARD_TABS.map((t) => [t, Number(row[t])])) as Record<DashboardTab, number>;
  }

  /** One page of a tab (rows start..end, as bull-board counts them), in the tab's order. */
  async page(tab: DashboardTab, from: number, end: number): Promise<ReadAt & { rows: DashboardRow[] }> {
    const start = Math.max(0, from);
    const last = Math.min(
      end,
      (tab === 'completed' ? Math.min(this.completed.count, DASHBOARD_COUNT_CAP) : DASHBOARD_COUNT_CAP) - 1,
    );
    const limit = Math.max(0, last - start + 1);
    if (limit === 0) return { now: new Date(), rows: [] };
    const rows: (DashboardRow & { readAt: Date })[] = await this.db.query(
      PAGES[tab],
      tab === 'completed' ? [limit, start, this.completed.ageMs] : [limit, start],
    );
    return { now: rows[0]?.readAt ?? new Date(), rows: rows.map(withoutReadAt) };
  }

  /** One callback by id, whatever its tab; undefined when there is none (or the id is not a UUID). */
  async job(id: string): Promise<(ReadAt & { row: DashboardRow }) | undefined> {
    if (!UUID.test(id)) return undefined;
    const [row]: (DashboardRow & { readAt: Date })[] = await this.db.query(ONE_ROW, [id]);
    return row && { now: row.readAt, row: withoutReadAt(row) };
  }

  /** A callback and its latest attempts (oldest first), in one snapshot: the log agrees with the row. */
  async log(id: string): Promise<(ReadAt & { row: DashboardRow; attempts: AttemptRow[] }) | undefined> {
    if (!UUID.test(id)) return undefined;
    return this.db.transaction('REPEATABLE READ', async (m) => {
      const [row]: (DashboardRow & { readAt: Date })[] = await m.query(ONE_ROW, [id]);
      if (!row) return undefined;
      const attempts: AttemptRow[] = await m.query(LOG, [id, LOG_ATTEMPTS]);
      return { now: row.readAt, row: withoutReadAt(row), attempts: attempts.reverse() };
    });
  }

  /** The ids of the soonest delayed callbacks. */
  async delayedIds(limit: number): Promise<string[]> {
    const rows: { id: string }[] = await this.db.query(DELAYED_IDS, [limit]);
    return rows.map((r) => r.id);
  }
}

function withoutReadAt(r: DashboardRow & { readAt?: Date }): DashboardRow {
  const { readAt: _, ...row } = r;
  return row;
}
