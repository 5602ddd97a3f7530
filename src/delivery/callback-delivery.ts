import { Inject, Injectable, Logger, OnApplicationBootstrap, BeforeApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DelayedError, Job, Worker } from 'bullmq';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config.js';
import { rawPool } from '../database/database.js';
import { createRedis, redisNamespace, RedisConnection } from '../database/redis.js';
import { RepeatLimitedLog } from '../common/repeat-limited-log.js';
import { Metrics } from '../metrics/metrics.js';
import { SecretBox } from '../partners/secret-box.js';
import { Batcher } from './batcher.js';
import { CALLBACK_QUEUE, CallbackQueue, DeliverJobData } from './callback-queue.js';
import { CallbackSender, SendResult } from './callback-sender.js';
import { signatureHeader } from './callback-signature.js';
import { Decision, RetryPolicy } from './retry-policy.js';
import { randomBytes } from 'node:crypto';
import { AdmitItem, Admitted, BreakerResult, creditLease, DestinationGate, HEALTHY_MS, SettleItem, Settled } from './destination-gate.js';
import { DestinationParking } from './destination-parking.js';
import { AttemptOutcome } from './retry-policy.js';
import { AttemptEntry, deadLetter, journal, keepJobs } from './delivery-journal.js';

interface DeliveryRow {
  id: string;
  partner_id: string;
  url: string;
  destination: string;
  parked_at: Date | null;
  body: string;
  status: string;
  schedule_attempts: number;
  attempt_count: number;
  next_attempt_at: Date | null;
  created_at: Date;
  signing_secret: string;
  previous_signing_secret: string | null;
  previous_secret_expires_at: Date | null;
}

const unsealLog = new Logger('CallbackDelivery');

/** How long a job whose destination had no free slot waits in the queue before asking again (±50 %). */
const SLOT_RETRY_MS = 50;

/**
 * How long a job whose destination has no free slot may wait in its worker for one of this
 * process's own requests to that destination to end and hand it the slot, before it steps back
 * into the queue. At most one job waits so per four such requests in flight: a busy healthy
 * destination keeps its next callbacks loaded and ready (no queue round trip per slot), and a
 * destination whose requests hang costs a few worker slots 100 ms each.
 */
const LOCAL_WAIT_MS = 100;
const REQUESTS_PER_WAITER = 4;

/*
 * Credits. A slot this process took for a fresh callback is named as a credit of the callback's
 * partner (destination-gate.ts, creditLease). Answered 2xx, the request gives it back here, not to
 * Redis: the process's next callback of the same destination and partner takes it without a
 * Redis call (a busy healthy destination costs no admission and no settlement per callback). It
 * stays a lease in Redis, so the destination's cap still holds across processes. What Redis would
 * have heard from each 2xx is reported in bulk (REPORT_MS): the last 2xx's time (the breaker's
 * health, a circuit another process opened meanwhile closed only by a 2xx answered after its last
 * failure) and how many callbacks started (the queued count). A credit goes back to Redis when it
 * sat IDLE_MS unused, on any answer but 2xx (settled there at once, this process's pending 2xx
 * reported first), and is not reused while the destination has parked callbacks (their resumes
 * need each settlement's room) or once its circuit is heard not closed. Every report renews the
 * process's credits; one Redis lost is dropped, and one in use for longer than a lease (a delivery
 * that broke off unsettled) is no longer renewed, so it runs out as a crashed process's would.
 */
const IDLE_MS = 20;
const REPORT_MS = 250;

/** A slot held by this process for one destination and partner (see Credits above). */
interface Credit {
  lease: string;
  partnerId: string;
  /** When it was last taken for a request or, while in the idle list, freed. */
  since: number;
  /** Not to be reused: its circuit is not closed, or Redis no longer holds its lease. */
  spent: boolean;
}

/** A slot a callback's request holds: its own lease (a reserved slot, a probe) or a credit. */
interface Slot {
  admission: 'ok' | 'probe';
  lease: string;
  credit: Credit | null;
}

/** Per destination: this process's requests in flight there, the jobs waiting here for a slot, and its credits. */
interface Local {
  busy: number;
  waiters: SlotWaiter[];
  /** Credits held, idle or in use, by lease. */
  credits: Map<string, Credit>;
  /** Credits not in use, the most recently freed last. */
  idle: Credit[];
  /** What the next report says: the last 2xx on a reused credit (0: none), callbacks started on reused credits. */
  okAt: number;
  started: number;
  /** Callbacks parked for the destination, as last heard from Redis (and parked here since). */
  waiting: number;
  /** When a request of this process there was last answered 2xx with no failure since (0: not lately). */
  lastOk: number;
  idleTimer?: NodeJS.Timeout;
}

/** A job waiting in this process for a slot of its destination (see LOCAL_WAIT_MS). */
interface SlotWaiter {
  id: string;
  partnerId: string;
  /** It has not asked admission (others were waiting already): counts as started when handed a slot. */
  uncounted: boolean;
  /** Offered a slot by a settlement whose answer is not in yet. */
  offered: boolean;
  /** Its time is up: not offered again, and told no unless an offer under way succeeds. */
  expired: boolean;
  resolve: (granted: Slot | null) => void;
  timer?: NodeJS.Timeout;
}

/** A job that runs this much before its row's attempt time was re-added early: wait for the row. */
const EARLY_TOLERANCE_MS = 1000;

/**
 * What became of one job: a later attempt (after this one, or not yet due), parked, delivered,
 * failed for good (dead letter), or null when nothing was to be done (a duplicate job).
 */
export type DeliveryResult =
  | { retryAt: number; attempt?: AttemptEntry }
  | { parked: true }
  | { slotRetryAt: number }
  | { delivered: AttemptEntry }
  | { failed: AttemptEntry; reason: string }
  | null;

/**
 * Delivers one callback per job: load the row (the database is the record of truth), sign the
 * stored body, POST it, and record the attempt and the callback's new state in one statement.
 */
@Injectable()
export class CallbackDelivery {
  private readonly policy: RetryPolicy;
  private readonly userAgent: string;
  private readonly pool: Pool;
  private readonly loads = new Batcher<string, DeliveryRow | undefined>((ids) => this.loadMany(ids));
  private readonly records = new Batcher<AttemptRecord, void>((items) => this.recordMany(items));
  private readonly admissions = new Batcher<AdmitItem, Admitted>((items) => this.gate.admit('start', items, this.leaseMs));
  private readonly settlements = new Batcher<SettleItem, Settled>((items) => this.gate.settle(items, this.leaseMs));
  private readonly local = new Map<string, Local>();
  /** Names this process's credits (see Credits above). */
  private readonly token = randomBytes(6).toString('base64url');
  private credits = 0;
  private reportTimer: NodeJS.Timeout | null = null;
  private readonly parks = new Batcher<{ id: string }, void>(async (rows) => {
    await this.parking.park(rows);
    return rows.map(() => undefined);
  });
  private readonly log = new Logger('Destinations');
  private readonly warnings = new RepeatLimitedLog((m) => this.log.warn(m));
  /** A worker's slot outlives a crashed holder by this much past the longest attempt. */
  private readonly leaseMs: number;

  constructor(
    @InjectDataSource() db: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly sender: CallbackSender,
    private readonly metrics: Metrics,
    private readonly gate: DestinationGate,
    private readonly parking: DestinationParking,
    private readonly box: SecretBox,
  ) {
    this.policy = new RetryPolicy(config.callbackRetryScheduleMs);
    this.pool = rawPool(db);
    this.userAgent = `funding-service-callbacks/${config.version}`;
    this.leaseMs = config.callbackTimeoutMs + 30_000;
  }

  /**
   * One job: `{retryAt}` when the next attempt is due later, `{slotRetryAt}` when its
   * destination had no free slot (the first time), `{parked}` when the callback now waits in
   * PostgreSQL for its destination, null when nothing more is to be done.
   */
  async deliver(callbackId: string, slotWaited = false, slotReserved = false, resumed = false): Promise<DeliveryResult> {
    const row = await this.loads.call(callbackId);
    if (!row) return null;
    // Already delivered or failed (a duplicate job), or parked meanwhile: nothing to do. A slot
    // reserved for this job goes back (a job waiting for its time holds none either).
    if (row.status !== 'pending' || row.parked_at) {
      await this.release(row);
      return null;
    }
    if (row.next_attempt_at && row.next_attempt_at.getTime() > Date.now() + EARLY_TOLERANCE_MS) {
      await this.release(row);
      return { retryAt: row.next_attempt_at.getTime() };
    }
    // One of its destination's in-flight slots: reserved already for a callback handed on from
    // parking or sent as a probe, one of this process's credits, or taken now (only now, once the
    // row is loaded: a slot is held for the request, not for the work around it). None free: the
    // job waits briefly here for one of this process's requests there to end, then a moment in
    // the queue (a fast destination frees one within milliseconds), holding no worker slot; none
    // free again, the callback is parked. An open circuit, or no slot free at a destination not
    // known to answer 2xx (new, failing: its slots may all hang on a dead endpoint): parked at once.
    const slot = await this.admit(row, slotWaited, slotReserved, resumed);
    if (slot === 'full' && !slotWaited) return { slotRetryAt: Date.now() + SLOT_RETRY_MS * (0.5 + Math.random()) };
    if (slot === 'full' || slot === 'park') return this.parked(row);
    this.localOf(row.destination).busy++;

    const secrets = [row.signing_secret];
    if (row.previous_signing_secret && row.previous_secret_expires_at && row.previous_secret_expires_at.getTime() > Date.now()) {
      secrets.push(row.previous_signing_secret);
    }
    const startedAt = new Date();
    const timestamp = Math.floor(startedAt.getTime() / 1000);
    const result = await this.sender.send({
      url: row.url,
      body: row.body,
      headers: {
        'content-type': 'application/json',
        'user-agent': this.userAgent,
        'webhook-id': row.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(secrets, row.id, timestamp, row.body),
      },
    });
    const decision = this.policy.decide(row.schedule_attempts + 1, result.outcome);
    // A probe of an open circuit that did not get through is the destination's failure, not the
    // callback's: it is logged as an attempt but uses none of its schedule, and the callback
    // waits with the others, to go with them when the circuit closes.
    const probeFailed = slot.admission === 'probe' && decision.action !== 'delivered' && !isFinal(result.outcome);
    // One time for the row and the job, so the dashboard's "will run at" is the row's.
    const nextAttemptAt = decision.action === 'retry' ? new Date(Date.now() + decision.delayMs) : null;
    // The answer is in: the slot goes back (and on to a parked callback) while the attempt is
    // recorded, so a busy destination's next callback does not wait for this one's record.
    const settling = this.settle(row, result, slot);
    await this.record(row, startedAt, result, decision, probeFailed, nextAttemptAt);
    await settling;

    this.metrics.attempts.inc({ result: probeFailed ? 'probe_failed' : decision.action, kind: result.outcome.kind });
    this.metrics.attemptDuration.observe(result.durationMs / 1000);
    if (decision.action === 'delivered') this.metrics.endToEnd.observe((Date.now() - row.created_at.getTime()) / 1000);
    if (probeFailed) return this.parked(row);
    const reason = decision.action === 'delivered' ? null : describe(result, decision);
    const attempt: AttemptEntry = {
      number: row.attempt_count + 1,
      statusCode: result.statusCode,
      error: result.error,
      durationMs: result.durationMs,
      sourceAddress: result.sourceAddress,
      outcome: nextAttemptAt ? { action: 'retry', at: nextAttemptAt } : reason !== null ? { action: 'fail', reason } : { action: 'delivered' },
    };
    if (nextAttemptAt) return { retryAt: nextAttemptAt.getTime(), attempt };
    return reason !== null ? { failed: attempt, reason } : { delivered: attempt };
  }

  /**
   * Parks the callback of a job that finished as `{parked}`. Only once BullMQ is done with the
   * job, and after removing it: a job still there (active, or kept as completed) would make
   * BullMQ ignore the relay's add of the same id when the callback is resumed. A crash before
   * this leaves the row queued-looking and overdue: the relay's sweep re-adds it.
   */
  async parkFinishedJob(job: Job<DeliverJobData>): Promise<void> {
    await job.remove().catch(() => undefined);
    await this.parks.call({ id: job.data.callbackId });
  }

  /** At shutdown, once no delivery is in flight: this process's credits and pending report go back to Redis. */
  async close(): Promise<void> {
    if (this.reportTimer) clearTimeout(this.reportTimer);
    this.reportTimer = null;
    const items: SettleItem[] = [];
    for (const [origin, l] of this.local) {
      clearTimeout(l.idleTimer);
      items.push(...this.backItems(origin, l, l.idle.splice(0)));
      l.credits.clear();
    }
    if (items.length) await this.gate.settle(items, this.leaseMs);
  }

  /** A callback about to be parked: its destination has parked callbacks now (credits are not reused). */
  private parked(row: DeliveryRow): { parked: true } {
    const l = this.local.get(row.destination);
    if (l) l.waiting++;
    return { parked: true };
  }

  /**
   * A slot for this callback's request (see deliver). A fresh callback takes an idle credit of its
   * destination and partner first. A job that holds no reserved slot joins the jobs already
   * waiting here for its destination without asking Redis (it was full a moment ago); otherwise
   * it asks, and waits here when told full. A job back from the queue after a wait (`slotWaited`)
   * does not wait again: it is parked when still no slot is free. A resumed callback asks Redis
   * (which counts it started among the resumed ones).
   */
  private async admit(row: DeliveryRow, slotWaited: boolean, slotReserved: boolean, resumed: boolean): Promise<Slot | 'full' | 'park'> {
    const origin = row.destination;
    const known = this.local.get(origin);
    if (known && !slotReserved && !resumed) {
      const i = known.idle.findLastIndex((c) => c.partnerId === row.partner_id);
      if (i >= 0) {
        const [credit] = known.idle.splice(i, 1);
        credit.since = Date.now();
        known.started++;
        return { admission: 'ok', lease: credit.lease, credit };
      }
    }
    let waited = false;
    if (!slotWaited && !slotReserved && !resumed && known?.waiters.length && this.mayWait(origin)) {
      const handed = await this.waitForSlot(origin, row, true);
      if (handed) return handed;
      waited = true;
    }
    const lease = slotReserved ? row.id : creditLease(row.partner_id, `${this.token}.${++this.credits}`);
    const { admission, waiting, healthy } = await this.admissions.call({ origin, id: row.id, lease });
    if (admission === 'ok' || admission === 'probe') {
      const l = this.localOf(origin);
      l.waiting = waiting;
      if (lease === row.id) return { admission, lease, credit: null };
      const credit: Credit = { lease, partnerId: row.partner_id, since: Date.now(), spent: admission === 'probe' };
      l.credits.set(lease, credit);
      return { admission, lease, credit };
    }
    if (admission === 'open') return 'park';
    // 'full' ('queued' is never the answer to a start). Waiting, here or in the queue, is for a
    // destination that answers 2xx (seen in Redis or here lately): a slot frees within
    // milliseconds there, while a new destination's slots may all hang until the timeout.
    if (!healthy && !((this.local.get(origin)?.lastOk ?? 0) > Date.now() - HEALTHY_MS)) return 'park';
    if (waited || slotWaited || !this.mayWait(origin)) return 'full';
    return (await this.waitForSlot(origin, row, false)) ?? 'full';
  }

  private localOf(origin: string): Local {
    let l = this.local.get(origin);
    if (!l) this.local.set(origin, (l = { busy: 0, waiters: [], credits: new Map(), idle: [], okAt: 0, started: 0, waiting: 0, lastOk: 0 }));
    return l;
  }

  /** Whether another job may wait here for this destination: one per four of its requests in flight from this process. */
  private mayWait(origin: string): boolean {
    const l = this.local.get(origin);
    return !!l && l.waiters.length < Math.ceil(l.busy / REQUESTS_PER_WAITER);
  }

  /** Waits up to LOCAL_WAIT_MS for a request ending in this process to hand this callback its slot. */
  private waitForSlot(origin: string, row: DeliveryRow, uncounted: boolean): Promise<Slot | null> {
    const l = this.localOf(origin);
    return new Promise<Slot | null>((resolve) => {
      const w: SlotWaiter = { id: row.id, partnerId: row.partner_id, uncounted, offered: false, expired: false, resolve };
      l.waiters.push(w);
      w.timer = setTimeout(() => {
        w.expired = true;
        if (w.offered) return; // the offer's answer decides
        l.waiters.splice(l.waiters.indexOf(w), 1);
        this.forget(origin, l);
        resolve(null);
      }, LOCAL_WAIT_MS);
    });
  }

  /** Drops a destination's local entry once nothing of it is in flight, waiting, held or to report here. */
  private forget(origin: string, l: Local): void {
    // An entry met in a callback that outlived it (a timer, an answer) is not the current one.
    if (this.local.get(origin) !== l) return;
    if (l.busy <= 0 && l.waiters.length === 0 && l.credits.size === 0 && l.okAt === 0 && l.started === 0) {
      clearTimeout(l.idleTimer);
      this.local.delete(origin);
    }
  }

  private async release(row: DeliveryRow): Promise<void> {
    await this.settlements.call({ origin: row.destination, id: row.id, result: 'none', error: null }).catch(() => undefined);
  }

  /**
   * Frees the slot and feeds the breaker. A credit answered 2xx stays in this process (see
   * Credits): handed to a job of the same partner waiting here, or idle. Any other slot is
   * settled in Redis (handed there to a job waiting here for the same destination, if any), and
   * lets the destination's parked callbacks use free room.
   */
  private async settle(row: DeliveryRow, r: SendResult, slot: Slot): Promise<void> {
    const origin = row.destination;
    const l = this.localOf(origin);
    l.busy--;
    const result = breakerResult(r.outcome);
    if (result === 'ok') l.lastOk = Date.now();
    else if (result === 'fail') l.lastOk = 0;
    const credit = slot.credit;
    const next = l.waiters.find((w) => !w.offered && !w.expired);
    // Reused unless a job of another partner waits here for the slot (handed over in Redis, below).
    if (credit && !credit.spent && result === 'ok' && l.waiting === 0 && (!next || next.partnerId === credit.partnerId)) {
      l.okAt = Date.now();
      this.reportLater();
      credit.since = Date.now();
      if (next) {
        if (next.uncounted) l.started++;
        this.grant(l, next, { admission: 'ok', lease: credit.lease, credit });
      } else {
        l.idle.push(credit);
        this.idleLater(origin, l);
      }
      return;
    }
    if (credit) l.credits.delete(credit.lease);
    // This process's 2xx on reused credits reach the breaker before this answer.
    const report = this.takeReport(origin, l);
    if (report) this.send(report);
    if (next) next.offered = true;
    let s: Settled;
    try {
      s = await this.settlements.call({
        origin,
        id: slot.lease,
        result,
        error: r.error,
        next: next && { id: next.id, uncounted: next.uncounted },
      });
    } catch (e) {
      // Redis unreachable: the slot comes back when its lease runs out; the outcome is recorded.
      if (next) this.answerOffer(l, next, false);
      this.forget(origin, l);
      this.warnings.warn(`cannot settle with the destination state in Redis: ${(e as Error).message}`);
      return;
    }
    if (next) this.answerOffer(l, next, s.handed);
    this.heard(origin, s, r.error);
    this.forget(origin, l);
  }

  /** What a settlement's answer means here: transitions logged and counted, parked callbacks resumed, credits given up. */
  private heard(origin: string, s: Settled, error: string | null): void {
    const l = this.local.get(origin);
    if (l && s.state) {
      l.waiting = s.waiting;
      if (s.state !== 'closed') this.revoke(origin, l);
    }
    if (s.transition) {
      this.metrics.circuitTransitions.inc({ transition: s.transition });
      if (s.transition !== 'reopened') {
        this.log.warn(
          s.transition === 'opened'
            ? `destination ${origin} circuit opened after consecutive failures (last: ${error ?? 'unknown'}); its callbacks wait, probing from now on`
            : `destination ${origin} circuit closed: answered 2xx; ${s.waiting} waiting callbacks resume`,
        );
      }
    }
    if (s.free > 0 && s.waiting > 0) {
      // Not awaited: this job's worker slot does not wait for the statement (one runs at a time
      // per process, and may take a thousand rows).
      this.parking.resume(origin, s.free).catch((e: Error) => this.warnings.warn(`cannot resume parked callbacks: ${e.message}`));
    }
  }

  /** A waiter's offer answered: handed the slot, it goes; refused, it waits on unless its time is up. */
  private answerOffer(l: Local, w: SlotWaiter, handed: boolean): void {
    w.offered = false;
    if (!handed && !w.expired) return;
    this.grant(l, w, handed ? { admission: 'ok', lease: w.id, credit: null } : null);
  }

  /** A waiting job's answer: the slot it is handed, or null. */
  private grant(l: Local, w: SlotWaiter, slot: Slot | null): void {
    clearTimeout(w.timer);
    l.waiters.splice(l.waiters.indexOf(w), 1);
    w.resolve(slot);
  }

  /** The destination's circuit is not closed: its idle credits go back, those in use are not reused. */
  private revoke(origin: string, l: Local): void {
    for (const c of l.credits.values()) c.spent = true;
    this.giveBack(origin, l, l.idle.splice(0));
  }

  /** Credits back to Redis (see backItems). */
  private giveBack(origin: string, l: Local, credits: Credit[]): void {
    for (const item of this.backItems(origin, l, credits)) this.send(item);
    this.forget(origin, l);
  }

  /** The settlements that give credits back, this process's pending report with the first (it frees that lease). */
  private backItems(origin: string, l: Local, credits: Credit[]): SettleItem[] {
    for (const c of credits) l.credits.delete(c.lease);
    const items = credits.map((c): SettleItem => ({ origin, id: c.lease, result: 'none', error: null }));
    const report = this.takeReport(origin, l);
    if (report) items.unshift({ ...report, id: items.shift()?.id ?? '' });
    return items;
  }

  /** A settlement not awaited by a delivery: its answer is heard, its failure logged. */
  private send(item: SettleItem): void {
    this.settlements.call(item).then(
      (s) => this.heard(item.origin, s, null),
      (e: Error) => this.warnings.warn(`cannot settle with the destination state in Redis: ${(e as Error).message}`),
    );
  }

  /** The destination's pending report, taken (null when there is nothing to say). */
  private takeReport(origin: string, l: Local): SettleItem | null {
    if (l.okAt === 0 && l.started === 0) return null;
    const item: SettleItem = { origin, id: '', result: 'report', error: null, at: l.okAt, started: l.started };
    l.okAt = 0;
    l.started = 0;
    return item;
  }

  /** Credits idle IDLE_MS go back to Redis (they hold slots other processes may need). */
  private idleLater(origin: string, l: Local): void {
    if (l.idleTimer) return;
    l.idleTimer = setTimeout(() => {
      l.idleTimer = undefined;
      const due = Date.now() - IDLE_MS;
      const stale = l.idle.filter((c) => c.since <= due);
      l.idle = l.idle.filter((c) => c.since > due);
      if (stale.length) this.giveBack(origin, l, stale);
      if (l.idle.length) this.idleLater(origin, l);
    }, IDLE_MS).unref();
  }

  /** Every REPORT_MS while this process holds credits or has 2xx to report: reports, and renews every credit's lease. */
  private reportLater(): void {
    if (this.reportTimer) return;
    this.reportTimer = setTimeout(() => {
      this.reportTimer = null;
      let again = false;
      for (const [origin, l] of this.local) {
        const report = this.takeReport(origin, l);
        if (report) this.send(report);
        for (const c of l.credits.values()) {
          if (!l.idle.includes(c) && Date.now() - c.since > this.leaseMs) {
            // In use longer than any request lasts (its delivery broke off unsettled): no longer
            // renewed, so its lease runs out in Redis as a crashed process's would.
            c.spent = true;
            l.credits.delete(c.lease);
            continue;
          }
          again = true;
          this.settlements.call({ origin, id: c.lease, result: 'renew', error: null }).then(
            (s) => {
              if (s.handed) return;
              // Redis no longer holds it (lost, or expired): not reused, and not counted here.
              c.spent = true;
              const i = l.idle.indexOf(c);
              if (i >= 0) l.idle.splice(i, 1);
              l.credits.delete(c.lease);
              this.forget(origin, l);
            },
            (e: Error) => this.warnings.warn(`cannot renew slots in Redis: ${e.message}`),
          );
        }
      }
      if (again) this.reportLater();
    }, REPORT_MS).unref();
  }

  private record(row: DeliveryRow, startedAt: Date, r: SendResult, d: Decision, probeFailed: boolean, nextAttemptAt: Date | null): Promise<void> {
    if (probeFailed) {
      return this.records.call({ row, startedAt, result: r, status: 'pending', nextAttemptAt: new Date(), lastError: r.error ?? 'probe failed', counts: false });
    }
    return this.records.call({
      row,
      startedAt,
      result: r,
      status: d.action === 'delivered' ? 'delivered' : d.action === 'fail' ? 'failed' : 'pending',
      nextAttemptAt,
      lastError: d.action === 'delivered' ? null : describe(r, d),
      counts: true,
    });
  }

  /** Many deliveries' rows in one query (the hot path bypasses the ORM for the raw pool). */
  private async loadMany(ids: string[]): Promise<(DeliveryRow | undefined)[]> {
    // Named statements: each connection parses and plans them once, not on every batch.
    const { rows } = await this.pool.query<DeliveryRow>({
      name: 'callback-delivery-load',
      text: `SELECT c.id, c.partner_id, c.url, c.destination, c.parked_at, c.body, c.status, c.schedule_attempts, c.attempt_count, c.next_attempt_at, c.created_at,
              p.signing_secret, p.previous_signing_secret, p.previous_secret_expires_at
         FROM callbacks c JOIN partners p ON p.id = c.partner_id
        WHERE c.id = ANY($1::uuid[])`,
      values: [ids],
    });
    const byId = new Map<string, DeliveryRow>();
    // Signing secrets are sealed at rest (secret-box.ts) and opened here, in memory only. A row
    // whose secret this process cannot open (its key missing from SECRETS_KEY) is skipped, not
    // sent unsigned, and stays pending; the batch's other rows go on.
    for (const r of rows) {
      try {
        r.signing_secret = this.box.open(r.signing_secret, 'partners.signing_secret');
        if (r.previous_signing_secret) r.previous_signing_secret = this.box.open(r.previous_signing_secret, 'partners.signing_secret');
        byId.set(r.id, r);
      } catch (e) {
        unsealLog.error(`callback ${r.id} not sent: ${(e as Error).message}`);
      }
    }
    return ids.map((id) => byId.get(id));
  }

  /**
   * Many attempts and their callbacks' new states in one statement, so each attempt row and
   * its callback's state commit together. A row redelivered meanwhile (schedule restarted)
   * keeps its new state; the attempt is logged either way.
   */
  private async recordMany(items: AttemptRecord[]): Promise<void[]> {
    try {
      await this.writeRecords(items);
      return items.map(() => undefined);
    } catch (e) {
      if (items.length === 1) return [await this.recordAlone(items[0], e as Error)];
      // One bad record must not cost the others theirs: each on its own.
      this.metrics.recordFailures.inc({ stage: 'batch' });
      this.warnings.warn(`attempt records refused as a batch, writing them one by one: ${(e as Error).message}`);
      return Promise.all(items.map((i) => this.writeRecords([i]).catch((err: Error) => this.recordAlone(i, err))));
    }
  }

  /** Last resort for one record PostgreSQL refused: keep the attempt and outcome, drop what the receiver sent. */
  private async recordAlone(item: AttemptRecord, e: Error): Promise<void> {
    this.metrics.recordFailures.inc({ stage: 'single' });
    this.warnings.warn(`attempt record refused, keeping it without the answer's text: ${e.message}`);
    const plain = (v: string | null) => (v === null ? null : v.replace(/[^\x20-\x7e]/g, '?'));
    try {
      await this.writeRecords([
        { ...item, result: { ...item.result, responseBody: null, error: plain(item.result.error) }, lastError: plain(item.lastError) },
      ]);
    } catch (again) {
      this.metrics.recordFailures.inc({ stage: 'lost' });
      this.warnings.warn(`attempt record lost: ${(again as Error).message}`);
      throw again;
    }
  }

  private async writeRecords(items: AttemptRecord[]): Promise<void> {
    const col = <T>(f: (i: AttemptRecord) => T) => items.map(f);
    await this.pool.query({
      name: 'callback-delivery-record',
      text: `WITH input AS (
         SELECT * FROM unnest($1::uuid[], $2::int[], $3::timestamptz[], $4::int[], $5::int[], $6::text[], $7::text[], $8::text[],
                              $9::text[], $10::timestamptz[], $11::text[], $12::int[], $13::bool[])
           AS t(id, number, started_at, duration_ms, status_code, error, response_body, source_address,
                status, next_attempt_at, last_error, schedule_attempts, counts)
       ), attempt AS (
         INSERT INTO callback_attempts (callback_id, number, started_at, duration_ms, status_code, error, response_body, source_address)
         SELECT id, number, started_at, duration_ms, status_code, error, response_body, source_address FROM input
       )
       UPDATE callbacks c
          SET attempt_count = c.attempt_count + 1,
              schedule_attempts = c.schedule_attempts + CASE WHEN i.counts THEN 1 ELSE 0 END,
              status = i.status,
              next_attempt_at = i.next_attempt_at,
              last_error = i.last_error,
              delivered_at = CASE WHEN i.status = 'delivered' THEN now() ELSE c.delivered_at END
         FROM input i
        WHERE c.id = i.id AND c.status = 'pending' AND c.schedule_attempts = i.schedule_attempts`,
      values: [
        col((i) => i.row.id),
        col((i) => i.row.attempt_count + 1),
        col((i) => i.startedAt),
        col((i) => i.result.durationMs),
        col((i) => i.result.statusCode),
        col((i) => i.result.error),
        col((i) => i.result.responseBody),
        col((i) => i.result.sourceAddress),
        col((i) => i.status),
        col((i) => i.nextAttemptAt),
        col((i) => i.lastError),
        col((i) => i.row.schedule_attempts),
        col((i) => i.counts),
      ],
    });
  }
}

interface AttemptRecord {
  /** Whether the attempt uses one of the callback's schedule (a failed probe does not). */
  counts: boolean;
  row: DeliveryRow;
  startedAt: Date;
  result: SendResult;
  status: string;
  nextAttemptAt: Date | null;
  lastError: string | null;
}

/** An outcome that ends the callback whatever its destination's state: nothing to wait for. */
function isFinal(o: AttemptOutcome): boolean {
  return o.kind === 'refused' || (o.kind === 'http' && o.statusCode === 410);
}

/** How an attempt counts for its destination's circuit breaker (API.md §5). */
export function breakerResult(o: AttemptOutcome): BreakerResult {
  switch (o.kind) {
    case 'success':
      return 'ok';
    case 'timeout':
    case 'network':
      return 'fail';
    case 'refused':
      return 'none';
    case 'http':
      if (o.statusCode >= 200 && o.statusCode < 300) return 'ok';
      return o.statusCode >= 500 || o.statusCode === 429 ? 'fail' : 'answered';
  }
}

/** The operator-facing reason, e.g. "HTTP 500", "timeout: …", "destination refused: …". */
function describe(r: SendResult, d: Decision): string {
  const what = r.error ?? (r.statusCode !== null ? `HTTP ${r.statusCode}` : 'unknown error');
  if (d.action === 'fail' && r.outcome.kind !== 'refused' && !(r.outcome.kind === 'http' && r.outcome.statusCode === 410)) {
    return `${what} (attempt schedule exhausted)`;
  }
  return what;
}

/**
 * BullMQ moves jobs to active one at a time and starts none until its fetch loop pauses, so one
 * Worker with a high concurrency makes the first job of a burst wait for the whole burst's
 * fetches. Several Workers of this size each fetch and start on their own: same total
 * concurrency, a shorter wait for any single job.
 */
const CONCURRENCY_PER_WORKER = 8;

/**
 * At shutdown, once every delivery of this process has recorded its outcome in PostgreSQL,
 * BullMQ gets this long to finish its Redis bookkeeping. Redis being unreachable, it never
 * would (Worker.close() waits for a Redis reply): the process then stops without it. Nothing
 * is lost: the database holds every outcome, a job left active in Redis is taken up again
 * after its lock expires (and finds its callback delivered or not yet due), and the relay's
 * sweep re-queues whatever Redis no longer has.
 */
const SHUTDOWN_REDIS_GRACE_MS = 3000;

/** The BullMQ workers of this process (roles `worker` and `all`): CALLBACK_CONCURRENCY deliveries in flight in all. */
@Injectable()
export class DeliveryWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly log = new Logger('DeliveryWorker');
  private workers: Worker<DeliverJobData>[] = [];
  private redis: RedisConnection | null = null;
  /** Jobs sent back to the queue by this process because their destination had no free slot. */
  private readonly slotWaited = new Set<string>();
  /** Deliveries (send + record) in progress in this process. */
  private inFlight = 0;
  private idleWaiters: (() => void)[] = [];
  private readonly errors = new RepeatLimitedLog((m) => this.log.warn(m));

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly delivery: CallbackDelivery,
    private readonly sender: CallbackSender,
    private readonly queue: CallbackQueue,
  ) {}

  onApplicationBootstrap(): void {
    this.redis = createRedis(this.config.redisUrl, `${this.config.queuePrefix}-worker`);
    const total = this.config.callbackConcurrency;
    const count = Math.ceil(total / CONCURRENCY_PER_WORKER);
    for (let i = 0; i < count; i++) {
      // Spread the total evenly: 50 → 7 workers of 7 or 8.
      const concurrency = Math.floor(total / count) + (i < total % count ? 1 : 0);
      const worker = new Worker<DeliverJobData>(CALLBACK_QUEUE, (job, token) => this.process(job, token), {
        // Commands share one connection; each worker duplicates it for its blocking wait.
        connection: this.redis,
        prefix: redisNamespace(this.config.queuePrefix),
        concurrency,
        // A job whose worker died mid-delivery is noticed within ~15 s (lock expiry + stalled
        // check) and goes back to wait, however often that happens: delivered after restart.
        // The lock is renewed every lockDuration/2 while a slow delivery is in flight.
        lockDuration: 10_000,
        stalledInterval: 5_000,
        maxStalledCount: Number.MAX_SAFE_INTEGER,
        // The dashboard's window on finished deliveries (a job's own removeOnComplete wins).
        removeOnComplete: keepJobs(this.config.dashboardKeep.completed),
        removeOnFail: keepJobs(this.config.dashboardKeep.failed),
      });
      worker.on('error', (e) => this.errors.warn(`worker: ${e.message}`));
      worker.on('completed', (job, result: { parked?: boolean } | undefined) => {
        if (result?.parked) this.delivery.parkFinishedJob(job).catch((e: Error) => this.errors.warn(`cannot park callback: ${e.message}`));
      });
      this.workers.push(worker);
    }
  }

  /** SIGTERM: stop taking jobs and let the in-flight deliveries finish and record. */
  async beforeApplicationShutdown(): Promise<void> {
    let closed = false;
    const closing = Promise.all(this.workers.map((w) => w.close().catch(() => undefined))).then(() => {
      closed = true;
    });
    // Workers stop taking jobs at once; wait for the deliveries under way to record.
    while (!closed) {
      await Promise.race([closing, this.idle()]);
      if (closed) break;
      await Promise.race([closing, new Promise((r) => setTimeout(r, SHUTDOWN_REDIS_GRACE_MS).unref())]);
      if (!closed && this.inFlight === 0) {
        this.log.warn('Redis does not answer: stopping without finishing the queue bookkeeping (every delivery outcome is recorded)');
        break;
      }
    }
    // This process's credits go back now rather than when their leases run out (not waited for
    // long: Redis may be what stops us).
    await Promise.race([this.delivery.close().catch(() => undefined), new Promise((r) => setTimeout(r, SHUTDOWN_REDIS_GRACE_MS).unref())]);
    this.redis?.disconnect();
    this.sender.close();
  }

  /** Resolves when no delivery of this process is in progress. */
  private idle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async process(job: Job<DeliverJobData>, token?: string): Promise<{ parked: true } | { delivered: true } | void> {
    let next: DeliveryResult;
    this.inFlight++;
    try {
      // Whether this job already waited once for a slot (this process's memory: a job that waited
      // in another process, or before a restart, may wait once more).
      const waited = this.slotWaited.delete(job.id!);
      next = await this.delivery.deliver(job.data.callbackId, waited, job.data.slot === true, job.data.resumed === true);
    } finally {
      if (--this.inFlight === 0) this.idleWaiters.splice(0).forEach((resolve) => resolve());
    }
    if (next === null || 'parked' in next) {
      // Nothing was delivered (a duplicate job, or the callback now waits in PostgreSQL): the job
      // goes, so the dashboard's completed jobs are deliveries only.
      job.opts.removeOnComplete = true;
      return next ?? undefined;
    }
    if ('slotRetryAt' in next) {
      // Its destination had no free slot: back to the queue for a moment (not a delivery attempt).
      // Bounded: ids of jobs another process took up would otherwise stay here.
      if (this.slotWaited.size >= 10_000) this.slotWaited.clear();
      this.slotWaited.add(job.id!);
      await job.moveToDelayed(next.slotRetryAt, token);
      throw new DelayedError();
    }
    // A delivered job is logged only if kept (DASHBOARD_KEEP_COMPLETED=0: no bookkeeping at all).
    if (!('delivered' in next) || this.config.dashboardKeep.completed.count > 0) journal(this.queue, job.id!, next);
    if ('retryAt' in next) {
      // Same job, same id, later: BullMQ keeps it delayed without counting a failure.
      await job.moveToDelayed(next.retryAt, token);
      throw new DelayedError();
    }
    if ('failed' in next) throw deadLetter(next.reason);
    return { delivered: true };
  }
}
