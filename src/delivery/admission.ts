import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig, type SqlSession } from '../platform/index.js';
import { Metrics } from '../operations/index.js';
import { CallbackQueue } from './callback-queue.js';
import { AdmissionFloors, FloorRow } from './admission-floors.js';
import { admissionRounds, Budget, Candidate, servedAfter } from './admission-plan.js';
import { DestinationRow, stateOf } from './destination-store.js';
import { ADMIT, CANDIDATES, EXPIRE, FLUSH_NOTICES, LAPSE, OPEN_DESTINATIONS, RELEASE } from '../callbacks/index.js';
import { outageError } from './settle-attempt.js';
import { isFailing, isProven, WindowConfig, windowConfigOf } from './destination-window.js';

/** A lease is the attempt's timeout and this much more (see the constructor). */
export const LEASE_MARGIN_MS = 30_000;

type CandidateRow = DestinationRow & FloorRow & { sending: number; oldest_due: number | null; worker_slots: number; workers: number; now: number };
/** `lease` is the same for every row of a round (now() is the statement's). */
type AdmittedRow = { id: string; destination: string; attempt_count: number; created_at: Date; lease: string };

/**
 * One admission pass (run by the relay that leads admission, on its own connection): for every
 * destination with room, its oldest due `pending` callbacks become `sending` (a statement per
 * round of admissionRounds) and their jobs go to Redis. If Redis refuses them they are released
 * at once; if this process dies in between, their leases run out and the sweep returns them.
 */
@Injectable()
export class Admission {
  private readonly log = new Logger('Admission');
  private readonly window: WindowConfig;
  private readonly leaseMs: number;
  private readonly scheduleTotalMs: number;
  private readonly floors = new AdmissionFloors();
  /** When each destination last had its turn, by this leader's pass count (admission-plan.ts, Served). */
  private served = new Map<string, number>();
  private passes = 0;

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

  /** Admits what may go now; returns how many callbacks were admitted. Counts the pass once it completed. */
  async admit(conn: SqlSession): Promise<number> {
    const admitted = await this.admitDue(conn);
    this.metrics.admissionPasses.inc();
    return admitted;
  }

  /**
   * How long the longest-due callback of a destination whose circuit is closed has been due, from
   * this pass's candidates (no statement of its own): funding_callback_oldest_due_seconds.
   * Callbacks of open destinations wait on purpose.
   */
  private noteOldestDue(rows: CandidateRow[]): void {
    let oldest: number | null = null;
    for (const r of rows) if (r.oldest_due !== null && r.opened_at === null && (oldest === null || r.oldest_due < oldest)) oldest = r.oldest_due;
    this.metrics.noteOldestDue(oldest === null ? 0 : Math.max(0, rows[0].now - oldest) / 1000);
  }

  private async admitDue(conn: SqlSession): Promise<number> {
    const { rows } = await conn.query<CandidateRow>({ name: 'admission-candidates', text: CANDIDATES, values: this.floors.params() });
    this.noteOldestDue(rows);
    this.floors.note(rows);
    this.passes++;
    if (rows.length === 0) {
      this.served.clear();
      return 0;
    }
    const now = rows[0].now;
    const budget: Budget = { slots: Math.min(this.config.callbackReadyWindow, rows[0].worker_slots), sending: 0, riskySending: 0, failingSending: 0 };
    const candidates: Candidate[] = [];
    for (const r of rows) {
      const state = stateOf(r);
      budget.sending += r.sending;
      if (!isProven(state, now)) budget.riskySending += r.sending;
      if (isFailing(state)) budget.failingSending += r.sending;
      if (r.oldest_due !== null) candidates.push({ key: r.key, state, sending: r.sending, oldestDue: r.oldest_due });
    }
    const admitted: AdmittedRow[] = [];
    try {
      const rounds = admissionRounds(candidates, budget, now, this.window, this.served);
      for (let round = rounds.next(); !round.done; ) {
        const got = await this.admitPlan(conn, round.value);
        admitted.push(...got);
        round = rounds.next(countBy(got));
      }
      // Each round's statement has its own now(), so its own lease: a job carries one.
      for (const [lease, ids] of byLease(admitted)) await this.queue.add(ids, lease, rows[0].workers);
      this.served = servedAfter(this.served, candidates, countBy(admitted), this.passes);
    } catch (e) {
      if (admitted.length > 0) await conn.query({ text: RELEASE, values: [admitted.map((r) => r.id)] }).catch(() => undefined);
      throw e;
    }
    const at = Date.now();
    for (const r of admitted) if (r.attempt_count === 0) this.metrics.relayLag.observe(Math.max(0, at - r.created_at.getTime()) / 1000);
    return admitted.length;
  }

  /** One round's ADMIT, each destination from the floor this pass read it at. */
  private async admitPlan(conn: SqlSession, plan: Map<string, number>): Promise<AdmittedRow[]> {
    const keys = [...plan.keys()];
    const floors = keys.map((k) => this.floors.of(k));
    const values = [keys, [...plan.values()], this.leaseMs, floors.map((f) => f?.at ?? null), floors.map((f) => f?.seq ?? null)];
    return (await conn.query<AdmittedRow>({ name: 'admission-admit', text: ADMIT, values })).rows;
  }

  /**
   * The timer's part: leases that ran out return to waiting; outages past a schedule's end fail
   * (their lastError settle-attempt.ts's outageError); the `callbacks.failed` windows that are
   * over tell what they held back.
   */
  async sweep(conn: SqlSession): Promise<void> {
    this.floors.forget();
    const lapsed = await conn.query({ name: 'admission-lapse', text: LAPSE });
    if (lapsed.rowCount) this.log.warn(`${lapsed.rowCount} callbacks back to waiting: their worker did not settle them within the lease`);
    const { rows: open } = await conn.query<{ key: string; origin: string; opened_at: number; last_error: string | null }>({ name: 'admission-open', text: OPEN_DESTINATIONS });
    if (open.length > 0) {
      const errors = open.map((d) => outageError(d.origin, d.opened_at, d.last_error));
      const expired = await conn.query({ name: 'admission-expire', text: EXPIRE, values: [this.scheduleTotalMs, open.map((d) => d.key), errors] });
      if (expired.rowCount) {
        this.metrics.expiredWhileWaiting.inc(expired.rowCount);
        this.log.warn(`${expired.rowCount} callbacks failed: their schedule ended while their destination's circuit was open`);
      }
    }
    await conn.query({ name: 'admission-flush-notices', text: FLUSH_NOTICES });
  }
}

/** How many callbacks of each destination a round admitted. */
function countBy(admitted: AdmittedRow[]): Map<string, number> {
  const n = new Map<string, number>();
  for (const r of admitted) n.set(r.destination, (n.get(r.destination) ?? 0) + 1);
  return n;
}

/** Admitted callbacks' ids by their lease. */
function byLease(admitted: AdmittedRow[]): Map<string, string[]> {
  const ids = new Map<string, string[]>();
  for (const r of admitted) {
    const group = ids.get(r.lease);
    if (group) group.push(r.id);
    else ids.set(r.lease, [r.id]);
  }
  return ids;
}
