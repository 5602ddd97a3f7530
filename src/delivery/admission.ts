import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config.js';
import type { SqlSession } from '../database/sql-session.js';
import { Metrics } from '../metrics/metrics.js';
import { CallbackQueue, microsKey } from './callback-queue.js';
import { Budget, Candidate, planAdmission } from './admission-plan.js';
import { DESTINATION_COLUMNS, DestinationRow, stateOf } from './destination-store.js';
import { isProven, WindowConfig, windowConfigOf } from './destination-window.js';

/**
 * Every destination with due callbacks or callbacks in flight, its state and counts, and the live
 * workers' slots, in one statement (an index probe per destination, whatever the backlog).
 */
const CANDIDATES = `
  WITH sending AS (SELECT destination, count(*)::int AS n FROM callbacks WHERE status = 'sending' GROUP BY destination)
  SELECT ${DESTINATION_COLUMNS}, coalesce(s.n, 0) AS sending, (extract(epoch FROM due.at) * 1000)::float8 AS oldest_due, due.n AS due,
         (SELECT coalesce(sum(concurrency), 0)::int FROM delivery_workers WHERE expires_at > now()) AS worker_slots,
         (SELECT count(*)::int FROM delivery_workers WHERE expires_at > now()) AS workers,
         (extract(epoch FROM now()) * 1000)::float8 AS now
    FROM destinations d
    LEFT JOIN sending s ON s.destination = d.origin
    LEFT JOIN LATERAL (SELECT min(x.at) AS at, count(*)::int AS n
                         FROM (SELECT next_attempt_at AS at FROM callbacks c
                                WHERE c.destination = d.origin AND c.status = 'pending' AND c.next_attempt_at <= now()
                                ORDER BY c.next_attempt_at LIMIT $1) x) due ON true
   WHERE due.at IS NOT NULL OR s.n > 0`;

/** Moves each destination's oldest due callbacks, as many as planned, to `sending` with a lease. */
const ADMIT = `
  UPDATE callbacks c SET status = 'sending', lease_until = now() + $3 * interval '1 millisecond'
    FROM (SELECT p.id FROM unnest($1::text[], $2::int[]) AS w(origin, n),
            LATERAL (SELECT id FROM callbacks
                      WHERE destination = w.origin AND status = 'pending' AND next_attempt_at <= now()
                      ORDER BY next_attempt_at LIMIT w.n FOR UPDATE SKIP LOCKED) p) picked
   WHERE c.id = picked.id
  RETURNING c.id, c.attempt_count, c.created_at, ${microsKey('c.lease_until')} AS lease`;

/** Admitted rows whose jobs Redis refused go back to waiting, as they were. */
const RELEASE = `UPDATE callbacks SET status = 'pending', lease_until = NULL WHERE id = ANY($1::uuid[]) AND status = 'sending'`;

/** A lease that ran out: its process died or its job was lost. Back to waiting, no attempt spent. */
const LAPSE = `UPDATE callbacks SET status = 'pending', lease_until = NULL WHERE status = 'sending' AND lease_until < now()`;

/**
 * Callbacks of an open destination whose schedule ended while they waited fail, naming the
 * outage (only while open: a callback to a closed destination never fails without an attempt).
 */
const EXPIRE = `
  UPDATE callbacks c SET status = 'failed', next_attempt_at = NULL,
         last_error = 'destination ' || e.origin || ' unavailable (circuit open since '
                      || to_char(e.opened_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
                      || coalesce(', last error: ' || e.last_error, '') || '); attempt schedule ended while waiting'
    FROM (SELECT p.id, d.origin, d.opened_at, d.last_error FROM destinations d,
            LATERAL (SELECT id FROM callbacks
                      WHERE destination = d.origin AND status = 'pending' AND schedule_started_at < now() - $1 * interval '1 millisecond'
                      ORDER BY schedule_started_at LIMIT 1000 FOR UPDATE SKIP LOCKED) p
           WHERE d.opened_at IS NOT NULL) e
   WHERE c.id = e.id
  RETURNING c.id`;

/** A lease is the attempt's timeout and this much more (see the constructor). */
export const LEASE_MARGIN_MS = 30_000;

type CandidateRow = DestinationRow & { sending: number; oldest_due: number | null; due: number; worker_slots: number; workers: number; now: number };
/** `lease` is the same for every row of a pass (now() is the statement's). */
type AdmittedRow = { id: string; attempt_count: number; created_at: Date; lease: string };

/**
 * One admission pass (run by the relay that leads admission, on its own connection): for every
 * destination with room, its oldest due `pending` callbacks become `sending` in one statement and
 * their jobs go to Redis. If Redis refuses them they are released at once; if this process dies
 * in between, their leases run out and the sweep returns them.
 */
@Injectable()
export class Admission {
  private readonly log = new Logger('Admission');
  private readonly window: WindowConfig;
  private readonly leaseMs: number;
  private readonly scheduleTotalMs: number;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly queue: CallbackQueue,
    private readonly metrics: Metrics,
  ) {
    this.window = windowConfigOf(config);
    // Covers the job's wait for a worker (short: admission never exceeds the workers' slots), the
    // return of a job whose worker died to another worker (BullMQ's stalled check, within 15 s),
    // and then still a whole attempt and its record (callback-delivery.ts sends nothing with less
    // left). A lease that lapses early costs no duplicate: the row is admitted again in a new job,
    // the old one leaves it alone (its lease is not the old job's), and the old attempt's record
    // still applies (settlement.ts).
    this.leaseMs = config.callbackTimeoutMs + LEASE_MARGIN_MS;
    this.scheduleTotalMs = config.callbackRetryScheduleMs.reduce((a, b) => a + b, 0);
  }

  /** Admits what may go now; returns how many callbacks were admitted. */
  async admit(conn: SqlSession): Promise<number> {
    const { rows } = await conn.query<CandidateRow>({ name: 'admission-candidates', text: CANDIDATES, values: [this.window.max] });
    if (rows.length === 0) return 0;
    const now = rows[0].now;
    const budget: Budget = { slots: Math.min(this.config.callbackReadyWindow, rows[0].worker_slots), sending: 0, riskySending: 0 };
    const candidates: Candidate[] = [];
    for (const r of rows) {
      const state = stateOf(r);
      budget.sending += r.sending;
      if (!isProven(state, now)) budget.riskySending += r.sending;
      if (r.oldest_due !== null) candidates.push({ origin: r.origin, state, sending: r.sending, oldestDue: r.oldest_due, due: r.due });
    }
    const plan = planAdmission(candidates, budget, now, this.window);
    if (plan.size === 0) return 0;
    const { rows: admitted } = await conn.query<AdmittedRow>({ name: 'admission-admit', text: ADMIT, values: [[...plan.keys()], [...plan.values()], this.leaseMs] });
    if (admitted.length === 0) return 0;
    try {
      await this.queue.add(
        admitted.map((r) => r.id),
        admitted[0].lease,
        rows[0].workers,
      );
    } catch (e) {
      await conn.query({ text: RELEASE, values: [admitted.map((r) => r.id)] }).catch(() => undefined);
      throw e;
    }
    const at = Date.now();
    for (const r of admitted) if (r.attempt_count === 0) this.metrics.relayLag.observe(Math.max(0, at - r.created_at.getTime()) / 1000);
    return admitted.length;
  }

  /** The timer's part: leases that ran out return to waiting; outages past a schedule's end fail. */
  async sweep(conn: SqlSession): Promise<void> {
    const lapsed = await conn.query({ name: 'admission-lapse', text: LAPSE });
    if (lapsed.rowCount) this.log.warn(`${lapsed.rowCount} callbacks back to waiting: their worker did not settle them within the lease`);
    const expired = await conn.query({ name: 'admission-expire', text: EXPIRE, values: [this.scheduleTotalMs] });
    if (expired.rowCount) {
      this.metrics.expiredWhileWaiting.inc(expired.rowCount);
      this.log.warn(`${expired.rowCount} callbacks failed: their schedule ended while their destination's circuit was open`);
    }
  }
}
