import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig, type SqlSession } from '../platform/index.js';
import { Metrics } from '../operations/index.js';
import { CallbackQueue } from './callback-queue.js';
import { AdmissionFloors } from './admission-floors.js';
import { admissionRounds, Budget, Candidate, servedAfter } from './admission-plan.js';
import { CatchUp } from './catch-up.js';
import { PATIENCE_MS, WAITING_PER_SLOT } from './delivery-slots.js';
import { stateOf } from './destination-store.js';
import { AdmissionStore, AdmittedRow, CandidateRow } from '../callbacks/index.js';
import { outageError } from './settle-attempt.js';
import { isProven, PROVEN_FOR_MS, WindowConfig, windowConfigOf } from './destination-window.js';

/** A lease is the attempt's timeout and this much more (see the constructor). */
export const LEASE_MARGIN_MS = 30_000;

/**
 * A callback of a destination that is not proven (new, idle, failing: its requests may hang until
 * the timeout), admitted this long ago and still in flight, counts as waiting on an answer: it holds
 * a waiting place, not a slot (delivery-slots.ts moves it there PATIENCE_MS after it started; its
 * job's trip to the worker takes less than the rest). A proven destination's count in slots however
 * long they take: a worker slow to start them (its CPU taken) never makes admission hand it more.
 */
export const ADMITTED_WAITING_MS = 2 * PATIENCE_MS;

/**
 * One admission pass (run by the relay that leads admission, on its own connection): for every
 * destination with room, its oldest due `pending` callbacks become `sending` (a statement per
 * round of admissionRounds) and each round's jobs go to Redis as it ends. If Redis refuses them
 * they are released at once; if this process dies in between, their leases run out and the sweep
 * returns them.
 */
@Injectable()
export class Admission {
  private readonly log = new Logger('Admission');
  private readonly window: WindowConfig;
  private readonly leaseMs: number;
  private readonly scheduleTotalMs: number;
  private readonly floors = new AdmissionFloors();
  /** A sweep ended since the last pass began: the next one forgets the floors first. */
  private swept = false;
  /** When each destination last had its turn, by this leader's pass count (admission-plan.ts, Served). */
  private served = new Map<string, number>();
  private passes = 0;
  /** The destinations catching up, and which of them a pass reads (the `readAhead` read least recently). */
  private readonly catchUp = new CatchUp();
  /** The slots the last pass found: a pass reads as many destinations catching up. */
  private readAhead = Infinity;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly queue: CallbackQueue,
    private readonly metrics: Metrics,
    private readonly store: AdmissionStore,
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
   * this pass's candidates and, for those it did not read, as a pass last read them (no statement
   * of its own): funding_callback_oldest_due_seconds. Callbacks of open destinations wait on purpose.
   */
  private noteOldestDue(rows: CandidateRow[], unread: number | null): void {
    let oldest = unread;
    for (const r of rows) if (r.opened_at === null && (oldest === null || r.oldest_due < oldest)) oldest = r.oldest_due;
    this.metrics.noteOldestDue(oldest === null ? 0 : Math.max(0, (rows[0]?.now ?? Date.now()) - oldest) / 1000);
  }

  /**
   * One pass: every destination but those catching up beyond the read-ahead (CatchUp) is read,
   * planned and admitted.
   */
  private async admitDue(conn: SqlSession): Promise<number> {
    if (this.swept) this.floors.forget();
    this.swept = false;
    const unread = this.catchUp.unread(this.readAhead);
    const rows = await this.store.candidates(
      conn,
      this.floors.params(unread),
      unread,
      this.leaseMs - ADMITTED_WAITING_MS,
      PROVEN_FOR_MS,
    );
    this.noteOldestDue(rows, this.catchUp.oldestDue(unread));
    this.floors.note(rows, unread);
    this.passes++;
    const { candidates, admitted, now, slots } = await this.admitFrom(conn, rows);
    this.served = servedAfter(this.served, candidates, admitted, this.passes, unread);
    this.catchUp.note(this.passes, unread, candidates, now);
    if (rows.length > 0) this.readAhead = Math.max(1, slots);
    return sum(admitted);
  }

  /** The slots and candidates `rows` give, admitted in rounds; how many of each destination. */
  private async admitFrom(
    conn: SqlSession,
    rows: CandidateRow[],
  ): Promise<{ candidates: Candidate[]; admitted: Map<string, number>; now: number; slots: number }> {
    if (rows.length === 0) return { candidates: [], admitted: new Map(), now: 0, slots: 0 };
    const now = rows[0].now;
    const { budget, candidates } = budgetOf(rows, this.config.callbackReadyWindow);
    const asks = new Map(rows.filter((r) => r.probe_id !== null).map((r) => [r.key, r.probe_id!]));
    const admitted = countBy(await this.admitRounds(conn, candidates, budget, now, rows[0].workers, asks));
    return { candidates, admitted, now, slots: budget.slots };
  }

  /**
   * A pass's rounds of ADMIT, each round's jobs in Redis as soon as it is admitted: fresh work
   * (admitted in the first round, admission-plan.ts) waits for no later round's statement. `asks`:
   * the probes redeliveries asked for (destination → callback), each admitted first and its
   * request ended once its job is in Redis (a request whose probe Redis refused stands).
   */
  private async admitRounds(
    conn: SqlSession,
    candidates: Candidate[],
    budget: Budget,
    now: number,
    workers: number,
    asks: Map<string, string>,
  ): Promise<AdmittedRow[]> {
    const admitted: AdmittedRow[] = [];
    const rounds = admissionRounds(candidates, budget, now, this.window, this.served);
    for (let round = rounds.next(); !round.done;) {
      const got = await this.admitPlan(conn, round.value, asks);
      await this.enqueue(conn, got, workers);
      const answered = [...new Set(got.map((r) => r.destination))].filter((key) => asks.has(key));
      const probes = answered.map((key) => ({ key, probe: asks.get(key)! }));
      if (probes.length > 0) await this.store.clearAsks(conn, probes);
      admitted.push(...got);
      round = rounds.next(countBy(got));
    }
    const at = Date.now();
    for (const r of admitted)
      if (r.attempt_count === 0) this.metrics.relayLag.observe(Math.max(0, at - r.created_at.getTime()) / 1000);
    return admitted;
  }

  /**
   * One round's callbacks in their jobs (a round's statement has its own now(), so its own lease,
   * which a job carries). If Redis refuses them they go back to waiting at once; the rounds before
   * are in Redis already, and their jobs deliver them.
   */
  private async enqueue(conn: SqlSession, rows: AdmittedRow[], workers: number): Promise<void> {
    try {
      for (const [lease, ids] of byLease(rows)) await this.queue.add(ids, lease, workers);
    } catch (e) {
      if (rows.length > 0)
        await this.store
          .release(
            conn,
            rows.map((r) => r.id),
          )
          .catch(() => undefined);
      throw e;
    }
  }

  /**
   * One round's admission, each destination from the floor this pass read it at; an open one's
   * probe a redelivery asked for first (an open destination takes one: it takes no more).
   */
  private async admitPlan(conn: SqlSession, plan: Map<string, number>, asks: Map<string, string>) {
    const asked = [...plan.keys()].filter((key) => asks.has(key)).map((key) => ({ key, probe: asks.get(key)! }));
    const probes = asked.length > 0 ? await this.store.admitProbes(conn, asked, this.leaseMs) : [];
    const probed = new Set(probes.map((r) => r.destination));
    const floor = (key: string) => ({ at: this.floors.of(key)?.at ?? null, seq: this.floors.of(key)?.seq ?? null });
    const round = [...plan].filter(([key]) => !probed.has(key)).map(([key, n]) => ({ key, n, ...floor(key) }));
    return [...probes, ...(round.length > 0 ? await this.store.admit(conn, round, this.leaseMs) : [])];
  }

  /**
   * The timer's part (timer-sweep.ts runs it beside the passes, on a connection of its own): leases
   * that ran out return to waiting; outages past a schedule's end fail (their lastError
   * settle-attempt.ts's outageError); the `callbacks.failed` windows that are over tell what they
   * held back. Then, whatever it did, the first pass to begin after it reads every destination from
   * its head (AdmissionFloors): it sees what the sweep returned, and what a floor hid meanwhile.
   */
  async sweep(conn: SqlSession): Promise<void> {
    try {
      const lapsed = await this.store.lapse(conn);
      if (lapsed)
        this.log.warn(`${lapsed} callbacks back to waiting: their worker did not settle them within the lease`);
      await this.expireOutages(conn);
      await this.store.flushNotices(conn);
    } finally {
      this.swept = true;
    }
  }

  /** The callbacks of open destinations whose schedule ended while they waited fail. */
  private async expireOutages(conn: SqlSession): Promise<void> {
    const open = await this.store.openDestinations(conn);
    if (open.length === 0) return;
    const expired = await this.store.expire(
      conn,
      this.scheduleTotalMs,
      open.map((d) => ({ key: d.key, error: outageError(d.origin, d.opened_at, d.last_error) })),
    );
    if (!expired) return;
    this.metrics.expiredWhileWaiting.inc(expired);
    this.log.warn(`${expired} callbacks failed: their schedule ended while their destination's circuit was open`);
  }
}

/**
 * The budget and candidates a pass's rows give: the slots (at most the ready window) and waiting
 * places of the live workers, and what is in flight in each (every destination's, by class: the
 * rows' `flight`).
 */
function budgetOf(rows: CandidateRow[], readyWindow: number): { budget: Budget; candidates: Candidate[] } {
  const now = rows[0].now;
  const budget: Budget = {
    slots: Math.min(readyWindow, rows[0].worker_slots),
    sending: 0,
    riskySending: 0,
    failingSending: 0,
    waitingPlaces: rows[0].worker_slots * WAITING_PER_SLOT,
    waiting: 0,
  };
  for (const f of rows[0].flight) {
    // A proven destination's callbacks count in slots however long they take (ADMITTED_WAITING_MS).
    const waiting = f.proven ? 0 : f.waiting;
    budget.sending += f.sending - waiting;
    budget.waiting += waiting;
    if (!f.proven) budget.riskySending += f.sending - waiting;
    if (f.failing) budget.failingSending += f.sending - waiting;
  }
  const candidates = rows.map((r): Candidate => {
    const state = stateOf(r);
    return {
      key: r.key,
      state,
      sending: r.sending,
      waiting: isProven(state, now) ? 0 : r.waiting,
      oldestDue: r.oldest_due,
    };
  });
  return { budget, candidates };
}

/** How many callbacks of each destination a round admitted. */
function countBy(admitted: AdmittedRow[]): Map<string, number> {
  const n = new Map<string, number>();
  for (const r of admitted) n.set(r.destination, (n.get(r.destination) ?? 0) + 1);
  return n;
}

const sum = (counts: Map<string, number>): number => [...counts.values()].reduce((a, b) => a + b, 0);

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
