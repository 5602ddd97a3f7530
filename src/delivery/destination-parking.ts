import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config.js';
import { rawPool } from '../database/database.js';
import { Metrics } from '../metrics/metrics.js';
import { Batcher } from './batcher.js';
import { CallbackQueue, QueuedCallback } from './callback-queue.js';
import { DestinationGate, DestinationSnapshot } from './destination-gate.js';

const BATCH = 1000;

/**
 * How long an admitted callback keeps its destination slot without a worker taking it up; a
 * worker renews it when it starts. Bounds how long a slot stays lost when a job vanishes.
 */
export const QUEUED_LEASE_MS = 10 * 60_000;

/** A claimed row on its way to the queue: what admission and the job need. */
export interface ClaimedRow {
  id: string;
  seq: string;
  next_attempt_at: Date | null;
  created_at: Date;
  message: number;
  company_id: string;
  destination: string;
}

/** The job of a row: what it names on the dashboard and when it is due. */
export const queued = (r: Pick<ClaimedRow, 'id' | 'next_attempt_at' | 'message' | 'company_id' | 'destination'>): QueuedCallback => ({
  id: r.id,
  nextAttemptAt: r.next_attempt_at,
  message: r.message,
  companyId: r.company_id,
  destination: r.destination,
});

/**
 * Where callbacks wait while their destination has no room or an open circuit: in PostgreSQL,
 * marked `parked_at`, out of the queue. A parked callback costs nothing while it waits (no job,
 * no Redis memory, no polling: the relay's claim index leaves it out). `dispatch` is the relay's
 * and the hand-off's door into the queue: a healthy destination's callbacks go to BullMQ without
 * a slot (their workers take one; resumed ones at most `cap` at a time), as do the first fresh
 * ones of a destination with no failure on record; any other destination's
 * claimed or resumed callback asks for a slot, goes with one, and parks without. When an attempt
 * ends, the worker hands its destination's free room straight to the oldest parked callbacks
 * (`resume`: one statement claims them, then `dispatch`), without a round trip through the
 * relay; an open circuit's probe and a closed circuit's backlog are resumed the same way.
 */
@Injectable()
export class DestinationParking {
  private readonly log = new Logger('Destinations');
  private readonly pool: Pool;
  private readonly scheduleTotalMs: number;

  constructor(
    @InjectDataSource() db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly gate: DestinationGate,
    private readonly queue: CallbackQueue,
    private readonly metrics: Metrics,
  ) {
    this.pool = rawPool(db);
    this.scheduleTotalMs = config.callbackRetryScheduleMs.reduce((a, b) => a + b, 0);
  }

  /**
   * Queues what can go and parks the rest. A healthy destination's rows go to BullMQ without a
   * slot (a worker takes one for the request), and so do the first fresh ones of a destination
   * with no failure on record (see AdmitMode): freshly claimed ones (`queue`) beyond its first
   * `cap` behind other destinations' fresh callbacks, so its backlog skips the park-and-resume
   * round trip; resumed ones (`hand-off`) at most `cap` at a time. Any other destination's rows
   * go only with a slot reserved for them (so they are not parked again on the way), and park
   * without one. If Redis refuses, the claim and the slots are released and the
   * error is thrown: the rows are then ordinary unqueued rows, taken again by the next relay pass
   * or sweep. Returns the rows queued once they are in the queue, and the parking of the others,
   * under way: it settles with its error or null, never rejects (the relay claims its next batch
   * meanwhile, so rows behind a dead destination's backlog do not also wait for its parking). A
   * parking that failed leaves its rows claimed and unqueued: the overdue sweep re-adds them.
   */
  async dispatch(rows: ClaimedRow[], mode: 'queue' | 'hand-off'): Promise<{ sent: ClaimedRow[]; parking: Promise<Error | null> }> {
    if (rows.length === 0) return { sent: [], parking: Promise.resolve(null) };
    const admitted: QueuedCallback[] = [];
    const waiting: ClaimedRow[] = [];
    const sent: ClaimedRow[] = [];
    try {
      const answers = await this.gate.admit(mode, rows.map((r) => ({ origin: r.destination, id: r.id })), QUEUED_LEASE_MS);
      rows.forEach((r, i) => {
        const { admission, priority } = answers[i];
        if (admission === 'full' || admission === 'open') return void waiting.push(r);
        sent.push(r);
        admitted.push({ ...queued(r), priority, slot: admission !== 'queued', resumed: admission === 'queued' && mode === 'hand-off' });
      });
      await this.queue.add(admitted);
    } catch (e) {
      await this.pool
        .query(`UPDATE callbacks SET enqueued_at = NULL WHERE id = ANY($1::uuid[]) AND status = 'pending'`, [rows.map((r) => r.id)])
        .catch(() => undefined);
      await this.gate.settle(sent.map((r) => ({ origin: r.destination, id: r.id, result: 'none' as const, error: null }))).catch(() => undefined);
      throw e;
    }
    const parking = this.park(waiting).then(
      () => null,
      (e: Error) => e,
    );
    return { sent, parking };
  }

  /** Takes these callbacks out of the queue's way until their destination can take them. */
  async park(rows: { id: string }[]): Promise<void> {
    if (rows.length === 0) return;
    const { rows: parked } = await this.pool.query<{ destination: string }>({
      name: 'destination-park',
      text: `UPDATE callbacks SET parked_at = now(), enqueued_at = NULL
              WHERE id = ANY($1::uuid[]) AND status = 'pending' AND parked_at IS NULL
          RETURNING destination`,
      values: [rows.map((r) => r.id)],
    });
    await this.gate.countWaiting(countBy(parked, (r) => r.destination));
  }

  /**
   * Hands up to `n` slots of a destination to its oldest parked callbacks. Hand-offs asked for in
   * the same tick (many deliveries finishing together, to one destination or many) go in one
   * statement and one dispatch.
   */
  resume(origin: string, n: number): Promise<number> {
    if (n <= 0) return Promise.resolve(0);
    return this.resumes.call({ origin, n });
  }

  /**
   * One resume statement at a time in this process (each takes up to BATCH rows per destination):
   * every settlement of a destination with room and parked callbacks asks, so the asks of the
   * ticks meanwhile go together in the next one instead of piling statements on the pool.
   */
  private readonly resumes = new Batcher<{ origin: string; n: number }, number>(
    async (asks) => {
      const wanted = new Map<string, number>();
      for (const a of asks) wanted.set(a.origin, Math.min(BATCH, (wanted.get(a.origin) ?? 0) + a.n));
      const { rows } = await this.pool.query<ClaimedRow>({
        name: 'destination-resume',
        text: `UPDATE callbacks c SET parked_at = NULL, enqueued_at = now()
                 FROM (SELECT p.id FROM unnest($1::text[], $2::int[]) AS d(origin, n),
                         LATERAL (SELECT id FROM callbacks
                                   WHERE destination = d.origin AND status = 'pending' AND parked_at IS NOT NULL
                                   ORDER BY destination, seq LIMIT d.n FOR UPDATE SKIP LOCKED) p) r
                WHERE c.id = r.id
            RETURNING c.id, c.seq, c.next_attempt_at, c.created_at, c.message, c.company_id, c.destination`,
        values: [[...wanted.keys()], [...wanted.values()]],
      });
      const resumed = new Map<string, number>();
      for (const r of rows) resumed.set(r.destination, (resumed.get(r.destination) ?? 0) - 1);
      if (rows.length > 0) {
        await this.gate.countWaiting(resumed);
        const failed = await (await this.dispatch(rows, 'hand-off')).parking;
        if (failed) throw failed;
      }
      // Each asker hears how many its destination got in all.
      return asks.map((a) => -(resumed.get(a.origin) ?? 0));
    },
    500,
    { serial: true },
  );

  /**
   * The periodic part, run by every relay (rows are taken with SKIP LOCKED, so relays share it):
   * send the probe of every open destination whose probe is due, resume closed destinations
   * that have room and parked callbacks (in case a wake-up was lost), and fail what waited past
   * the end of its schedule.
   */
  async sweep(): Promise<void> {
    const asks = (await this.gate.probesDue()).map((origin) => ({ origin, n: 1 }));
    const waiting = await this.gate.waiting();
    if (waiting.size > 0) {
      for (const d of await this.gate.snapshot([...waiting.keys()])) {
        if (d.state === 'closed') asks.push({ origin: d.origin, n: d.room });
      }
    }
    // Asked together, they go in one statement.
    await Promise.all(asks.map((a) => this.resume(a.origin, a.n)));
    await this.expire();
  }

  /**
   * After Redis lost its state (restart, flush), parked rows would wait for a count nobody
   * keeps: find every destination with parked rows (one index probe per destination, not a
   * scan of the rows) and restore the counts Redis is missing. Cheap enough to run every few
   * seconds; its cost grows with the number of waiting destinations, not waiting callbacks.
   */
  async reconcile(): Promise<void> {
    const { rows } = await this.pool.query<{ destination: string }>({
      name: 'destination-parked-origins',
      text: `WITH RECURSIVE d AS (
               (SELECT destination FROM callbacks WHERE status = 'pending' AND parked_at IS NOT NULL ORDER BY destination LIMIT 1)
               UNION ALL
               SELECT (SELECT destination FROM callbacks
                        WHERE status = 'pending' AND parked_at IS NOT NULL AND destination > d.destination
                        ORDER BY destination LIMIT 1)
                 FROM d WHERE d.destination IS NOT NULL)
             SELECT destination FROM d WHERE destination IS NOT NULL`,
    });
    // The queued counts only set priorities; with no job waiting in the queue they can only be stale.
    if (!(await this.queue.anyWaiting())) await this.gate.clearQueued();
    if (rows.length === 0) return;
    const counted = await this.gate.waiting();
    for (const { destination } of rows) {
      if (counted.has(destination)) continue;
      const { rows: c } = await this.pool.query<{ n: string }>(
        `SELECT count(*) AS n FROM callbacks WHERE destination = $1 AND status = 'pending' AND parked_at IS NOT NULL`,
        [destination],
      );
      await this.gate.setWaiting(destination, Number(c[0].n));
    }
  }

  /** Parked callbacks whose schedule has run out fail, naming why they waited. */
  async expire(): Promise<number> {
    const { rows } = await this.pool.query<{ id: string; destination: string }>({
      name: 'destination-expired',
      text: `SELECT id, destination FROM callbacks
              WHERE status = 'pending' AND parked_at IS NOT NULL AND schedule_started_at < now() - make_interval(secs => $1)
              ORDER BY schedule_started_at LIMIT ${BATCH}`,
      values: [this.scheduleTotalMs / 1000],
    });
    if (rows.length === 0) return 0;
    const states = new Map((await this.gate.snapshot([...new Set(rows.map((r) => r.destination))])).map((d) => [d.origin, d]));
    const { rows: failed } = await this.pool.query<{ destination: string }>({
      name: 'destination-expire',
      text: `UPDATE callbacks c SET status = 'failed', parked_at = NULL, next_attempt_at = NULL, last_error = e.last_error
               FROM unnest($1::uuid[], $2::text[]) AS e(id, last_error)
              WHERE c.id = e.id AND c.status = 'pending' AND c.parked_at IS NOT NULL
          RETURNING c.destination`,
      values: [rows.map((r) => r.id), rows.map((r) => outageError(r.destination, states.get(r.destination)))],
    });
    await this.gate.countWaiting(countBy(failed, (r) => r.destination, -1));
    this.metrics.expiredWhileWaiting.inc(failed.length);
    if (failed.length) this.log.warn(`${failed.length} callbacks failed: their schedule ended while their destination could not take them`);
    return failed.length;
  }
}

/** The `lastError` of a callback that waited for its destination until its schedule ended. */
export function outageError(origin: string, d: DestinationSnapshot | undefined): string {
  if (d && d.state !== 'closed') {
    const since = d.openedAt ? ` since ${d.openedAt.toISOString()}` : '';
    return `destination ${origin} unavailable (circuit open${since}${d.lastError ? `, last error: ${d.lastError}` : ''}); attempt schedule ended while waiting`;
  }
  return `destination ${origin} had no free delivery slot; attempt schedule ended while waiting`;
}

function countBy<T>(rows: T[], key: (r: T) => string, sign = 1): Map<string, number> {
  const m = new Map<string, number>();
  for (const r of rows) m.set(key(r), (m.get(key(r)) ?? 0) + sign);
  return m;
}
