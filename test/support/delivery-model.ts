/**
 * The in-memory model of the delivery tables (callbacks, destinations, delivery_workers) and of
 * the Redis jobs that test/delivery-model.spec.ts drives: what admission.ts (CANDIDATES, ADMIT,
 * LAPSE, EXPIRE, RELEASE) and settlement.ts (RECORD) do in PostgreSQL, with the partners' URL
 * changes, redelivery (the code's rule, redelivery-rules.ts, and the probe it asks an open
 * destination for: destinations.probe_id), Promote and retention, over the code's own pure
 * functions, constants and job shape. Each change it makes to a callback is noted by the lifecycle
 * table's event.
 */
import { destinationKey } from '../../src/callbacks/callback-destination.js';
import type { LifeEvent } from '../../src/callbacks/callback-lifecycle.js';
import { admissionRounds, Budget, Candidate, servedAfter } from '../../src/delivery/admission-plan.js';
import { CatchUp } from '../../src/delivery/catch-up.js';
import { ADMITTED_WAITING_MS, LEASE_MARGIN_MS } from '../../src/delivery/admission.js';
import { PATIENCE_MS, WAITING_PER_SLOT } from '../../src/delivery/delivery-slots.js';
import { LEASE_SPARE_MS } from '../../src/delivery/callback-delivery.js';
import { jobsOf } from '../../src/delivery/callback-queue.js';
import { AttemptOutcome, isFinal as finalOutcome } from '../../src/egress/attempt-outcome.js';
import type { SendResult } from '../../src/egress/callback-sender.js';
import {
  DestinationState,
  isFailing,
  isProven,
  newDestination,
  roomOf,
  WindowConfig,
} from '../../src/delivery/destination-window.js';
import { redeliveryOf } from '../../src/callbacks/redelivery-rules.js';
import { DomainError } from '../../src/platform/http/domain-error.js';
import { settleAttempt } from '../../src/delivery/settle-attempt.js';
import { RetryPolicy } from '../../src/delivery/retry-policy.js';

export const cfg: WindowConfig = { initial: 2, max: 4, threshold: 3, probe: { first: 1000, last: 4000 } };
export const SCHEDULE = [1000, 2000, 4000];
export const SCHEDULE_TOTAL = SCHEDULE.reduce((a, b) => a + b, 0);
export const MAX_ATTEMPTS = SCHEDULE.length + 1;
export const READY_WINDOW = 6;
/** Long next to the lease's margin, so that callbacks waiting for a slot do run short of lease. */
export const TIMEOUT_MS = 20_000;
export const LEASE_MS = TIMEOUT_MS + LEASE_MARGIN_MS;
/**
 * The destinations, by key (callbacks.destination): one partner's origin each. The first two are
 * two partners' at one origin (a shared inbox), each with its own window and circuit, so every
 * history of two or more destinations has partners sharing an origin.
 */
export const DESTINATIONS = [
  destinationKey('p1', 'https://a.test'),
  destinationKey('p2', 'https://a.test'),
  destinationKey('p1', 'https://b.test'),
  destinationKey('p2', 'https://c.test'),
];

export type Behaviour = 'ok' | '5xx' | '429' | 'hang' | '4xx' | '410' | 'refused';
export const BEHAVIOURS: Behaviour[] = ['ok', '5xx', '429', 'hang', '4xx', '410', 'refused'];
/**
 * A destination's answer, as callback-sender.ts reports it: for the model and for the statements'
 * test (delivery-statements.e2e-spec.ts), whose attempts time out sooner and whose 429s carry no
 * Retry-After (its time moves by hand, a second at most).
 */
export function answer(b: Behaviour, timeoutMs = TIMEOUT_MS, retryAfter: string | null = '30'): SendResult {
  const r = (outcome: AttemptOutcome, statusCode: number | null, error: string | null = null) => ({
    outcome,
    statusCode,
    error,
    responseBody: null,
    sourceAddress: null,
    answer: null,
    durationMs: 1,
  });
  if (b === 'ok') return r({ kind: 'http', statusCode: 200 }, 200);
  if (b === 'hang') return r({ kind: 'timeout' }, null, `timeout: no answer within ${timeoutMs} ms`);
  if (b === 'refused') return r({ kind: 'refused' }, null, 'destination refused');
  const code = { '5xx': 503, '429': 429, '4xx': 400, '410': 410 }[b];
  return r({ kind: 'http', statusCode: code, retryAfter: b === '429' ? retryAfter : null }, code, `HTTP ${code}`);
}
const isFinal = (r: SendResult) => finalOutcome(r.outcome);

export type Status = 'pending' | 'sending' | 'delivered' | 'failed';
export interface Callback {
  id: number;
  dest: string;
  status: Status;
  nextAttemptAt: number | null;
  leaseUntil: number | null;
  scheduleStartedAt: number;
  scheduleAttempts: number;
  attemptCount: number;
  lastError: string | null;
  /** The destination the partner moved it to while it was `sending` (next_url), and whether it removed its URL (url_removed_at). */
  nextDest: string | null;
  removed: boolean;
  /** How its destination stood when it was last admitted. */
  admittedAs: 'proven' | 'unproven' | 'open' | null;
}
/**
 * One callback of a job on a worker, with the row as the worker loaded it. A job carries up to
 * JOB_CALLBACKS; each of its callbacks is sent once it has one of the worker's slots (`startedAt`).
 */
export interface Job {
  cb: Callback;
  dest: string;
  admittedAs: Callback['admittedAs'];
  job: number;
  worker: number;
  admittedAt: number;
  startedAt: number | null;
  attemptCount: number;
  scheduleAttempts: number;
  scheduleKey: number;
}
/** A callback's end (failed, or a final answer recorded), with what the model knew then. */
export interface End {
  cb: Callback;
  by: 'attempt' | 'expire' | 'removed';
  status: Status;
  final: boolean;
  probe: boolean;
  scheduleAttempts: number;
  attemptCount: number;
  open: boolean;
  lastError: string;
}
/** A destination as a pass found it (`lastServed`: the pass admission remembered it last got a slot at, null: never or idle since) and what it admitted. */
export interface Row {
  state: DestinationState;
  sending: number;
  due: number;
  oldestDue: number | null;
  room: number;
  proven: boolean;
  failing: boolean;
  lastServed: number | null;
  admitted: number;
  /** Of `sending`, those in waiting places (an unproven destination's, admitted ADMITTED_WAITING_MS ago or more). */
  waiting: number;
}
/** `skipped`: the destinations catching up whose callbacks the pass did not read (src/delivery/catch-up.ts). */
export interface PassReport {
  now: number;
  slots: number;
  /** The live workers' waiting places. */
  places: number;
  rows: Map<string, Row>;
  skipped: ReadonlySet<string>;
}
/** A destination: its window and breaker, what its receiver does, and the callback a redelivery asked to go as its next probe (probe_id). */
export interface Dest {
  state: DestinationState;
  behaviour: Behaviour;
  probe: number | null;
  /** Its receiver has answered an attempt (any HTTP status), as the model saw it. */
  answered: boolean;
}
/** A change the model made to a callback, named by the lifecycle table's event (src/callbacks/callback-lifecycle.ts). */
export interface Change {
  event: LifeEvent;
  id: number;
  from: Status | null;
  to: Status | null;
}

/** The tables `callbacks`, `destinations`, `delivery_workers` and the Redis jobs, in memory. */
export class World {
  now = Date.UTC(2030, 0, 1);
  readonly dests = new Map<string, Dest>();
  /** Redeliveries the code's rule refused, with why (none may be refused for an open circuit). */
  readonly refusals: string[] = [];
  readonly callbacks: Callback[] = [];
  readonly jobs = new Map<number, Job>();
  readonly workers: { slots: number; up: boolean }[];
  readonly ends: End[] = [];
  /** Each timeout settled on a closed destination that had never answered, and whether it left it open. */
  readonly firstSilences: { dest: string; open: boolean }[] = [];
  /** Every change made to a callback, in order, by its event. */
  readonly changes: Change[] = [];
  /** The callbacks of each job added to the queue, for checking the job shape. */
  readonly jobSizes: number[] = [];
  private readonly policy: RetryPolicy;
  /** Admission's memory between passes: when each destination last got a slot (admission-plan.ts, Served). */
  private served = new Map<string, number>();
  private passes = 0;
  /** Admission's destinations catching up, and how many of them a pass reads (src/delivery/catch-up.ts). */
  private readonly catchUp = new CatchUp();
  private readAhead = Infinity;
  private ids = 0;

  constructor(destinations: number, workerSlots: number[], seed = 1) {
    for (const o of DESTINATIONS.slice(0, destinations))
      this.dests.set(o, { state: newDestination(cfg), behaviour: 'ok', probe: null, answered: false });
    this.workers = workerSlots.map((slots) => ({ slots, up: true }));
    let r = seed;
    this.policy = new RetryPolicy(
      SCHEDULE,
      () => (r = (r * 48271) % 0x7fffffff) / 0x7fffffff,
      () => this.now,
    );
  }

  of = (origin: string, status: Status) => this.callbacks.filter((c) => c.dest === origin && c.status === status);
  dueOf = (origin: string) =>
    this.of(origin, 'pending')
      .filter((c) => c.nextAttemptAt! <= this.now)
      .sort((a, b) => a.nextAttemptAt! - b.nextAttemptAt! || a.id - b.id);
  workerSlots = () => this.workers.reduce((n, w) => n + (w.up ? w.slots : 0), 0);
  slots = () => Math.min(READY_WINDOW, this.workerSlots());
  busy = () => this.callbacks.some((c) => c.status === 'pending' || c.status === 'sending');

  private note(event: LifeEvent, c: Callback, from: Status | null, to: Status | null = c.status): void {
    this.changes.push({ event, id: c.id, from, to });
  }

  commit(origin: string): void {
    this.callbacks.push({
      id: this.ids++,
      dest: origin,
      status: 'pending',
      nextAttemptAt: this.now,
      leaseUntil: null,
      scheduleStartedAt: this.now,
      scheduleAttempts: 0,
      attemptCount: 0,
      lastError: null,
      nextDest: null,
      removed: false,
      admittedAs: null,
    });
    this.note('record', this.callbacks.at(-1)!, null);
  }

  /**
   * Admission.admit(): CANDIDATES (an open destination's callbacks read only once its probe is
   * due), then admissionRounds' plans, each ADMIT taking what a destination has, and each round's
   * callbacks in jobs as soon as it is admitted.
   */
  pass(): PassReport {
    const unread = this.catchUp.unread(this.readAhead);
    const live = this.workers.map((_, i) => i).filter((i) => this.workers[i].up);
    const { report, candidates, admitted } = this.admit(unread, (callbacks) => {
      const byId = new Map(callbacks.map((c) => [String(c.id), c]));
      for (const ids of jobsOf([...byId.keys()], live.length))
        this.enqueue(
          ids.map((id) => byId.get(id)!),
          live,
        );
      return true;
    });
    this.start();
    this.served = servedAfter(this.served, candidates, admitted, ++this.passes, unread);
    this.catchUp.note(this.passes, unread, candidates, report.now);
    if ([...report.rows.values()].some((r) => r.due > 0 || r.sending > 0)) this.readAhead = Math.max(1, report.slots);
    return report;
  }

  /** A pass whose first round's jobs Redis refused: RELEASE of what that round admitted, and the pass ends; admission remembers nothing of it. */
  refusedPass(): void {
    this.admit(this.catchUp.unread(this.readAhead), (callbacks) => {
      for (const cb of callbacks) this.backToWaiting(cb, 'release');
      return false;
    });
  }

  /**
   * CANDIDATES and the ADMIT rounds, each round's callbacks (moved to `sending`) handed to
   * `enqueued`, which says whether the pass goes on: how many of each destination it admitted.
   */
  private admit(
    skipped: ReadonlySet<string>,
    enqueued: (callbacks: Callback[]) => boolean,
  ): { report: PassReport; candidates: Candidate[]; admitted: Map<string, number> } {
    const places = this.workerSlots() * WAITING_PER_SLOT;
    const report: PassReport = { now: this.now, slots: this.slots(), places, rows: new Map(), skipped };
    const budget: Budget = {
      slots: report.slots,
      sending: 0,
      riskySending: 0,
      failingSending: 0,
      waitingPlaces: places,
      waiting: 0,
    };
    const candidates: Candidate[] = [];
    const asks = new Map([...this.dests].filter(([, d]) => d.probe !== null).map(([o, d]) => [o, d.probe!]));
    for (const [origin, { state }] of this.dests) {
      const inFlight = this.of(origin, 'sending');
      const sending = inFlight.length;
      const waiting = isProven(state, this.now)
        ? 0
        : inFlight.filter((c) => this.now - (this.jobs.get(c.id)?.admittedAt ?? this.now) >= ADMITTED_WAITING_MS)
            .length;
      const read =
        (state.openedAt === null || state.nextProbeAt! <= this.now || state.probeAsked) && !skipped.has(origin);
      const due = read ? this.dueOf(origin) : [];
      const row: Row = {
        state,
        sending,
        due: due.length,
        oldestDue: due[0]?.nextAttemptAt ?? null,
        room: roomOf(state, sending, this.now, cfg),
        proven: isProven(state, this.now),
        failing: isFailing(state),
        lastServed: this.served.get(origin) ?? null,
        admitted: 0,
        waiting,
      };
      report.rows.set(origin, row);
      if (due.length === 0 && sending === 0) continue;
      budget.sending += sending - waiting;
      budget.waiting += waiting;
      if (!row.proven) budget.riskySending += sending - waiting;
      if (row.failing) budget.failingSending += sending - waiting;
      if (due.length > 0) candidates.push({ key: origin, state, sending, waiting, oldestDue: row.oldestDue! });
    }
    const rounds = admissionRounds(candidates, budget, this.now, cfg, this.served);
    for (let round = rounds.next(); !round.done;) {
      const got = new Map<string, number>();
      const admitted: Callback[] = [];
      for (const [origin, n] of round.value) {
        const row = report.rows.get(origin)!;
        // ADMIT: the probe a redelivery asked for first, while it still waits there; then the oldest due.
        const asked = this.callbacks.filter(
          (c) => c.id === asks.get(origin) && c.dest === origin && c.status === 'pending',
        );
        for (const cb of [...asked, ...this.dueOf(origin).filter((c) => !asked.includes(c))].slice(0, n)) {
          Object.assign(cb, {
            status: 'sending',
            leaseUntil: this.now + LEASE_MS,
            admittedAs: row.state.openedAt !== null ? 'open' : row.proven ? 'proven' : 'unproven',
          });
          this.note('admit', cb, 'pending');
          row.admitted++;
          got.set(origin, (got.get(origin) ?? 0) + 1);
          admitted.push(cb);
        }
      }
      if (!enqueued(admitted)) break;
      // CLEAR_ASKS: a probe admitted ends the request CANDIDATES read (not one made since).
      for (const origin of got.keys())
        if (asks.has(origin) && this.dests.get(origin)!.probe === asks.get(origin)) this.ask(origin, null);
      round = rounds.next(got);
    }
    return { report, candidates, admitted: new Map([...report.rows].map(([o, r]) => [o, r.admitted])) };
  }

  /** A job goes to the live worker holding the fewest callbacks (BullMQ: whichever asks first). */
  private enqueue(cbs: Callback[], live: number[]): void {
    if (live.length === 0) throw new Error(`callbacks ${cbs.map((c) => c.id).join()} admitted with no live worker`);
    const load = (i: number) => [...this.jobs.values()].filter((j) => j.worker === i).length;
    const worker = [...live].sort((a, b) => load(a) - load(b))[0];
    const job = this.jobSizes.push(cbs.length);
    // A callback still held by an older job of this worker model (its lease lapsed and it was admitted again) keeps that entry.
    for (const cb of cbs.filter((c) => !this.jobs.has(c.id))) {
      this.jobs.set(cb.id, {
        cb,
        dest: cb.dest,
        admittedAs: cb.admittedAs,
        job,
        worker,
        admittedAt: this.now,
        startedAt: null,
        attemptCount: cb.attemptCount,
        scheduleAttempts: cb.scheduleAttempts,
        scheduleKey: cb.scheduleStartedAt,
      });
    }
  }

  /**
   * Each worker sends the callbacks it holds as its slots free, in arrival order; one whose lease
   * has less left than an attempt and its record (callback-delivery.ts) is not sent: it lapses. One
   * started PATIENCE_MS ago or more leaves its slot for a waiting place while one is free.
   */
  start(): void {
    this.workers.forEach((w, i) => {
      const mine = [...this.jobs.values()].filter((j) => j.worker === i);
      const started = mine.filter((j) => j.startedAt !== null);
      const overdue = started.filter((j) => this.now - j.startedAt! >= PATIENCE_MS).length;
      let free = w.slots - (started.length - Math.min(overdue, w.slots * WAITING_PER_SLOT));
      for (const j of mine.filter((j) => j.startedAt === null)) {
        if (free === 0) break;
        if (j.cb.leaseUntil! - this.now < TIMEOUT_MS + LEASE_SPARE_MS) this.jobs.delete(j.cb.id);
        else {
          j.startedAt = this.now;
          free--;
        }
      }
    });
  }

  started = () => [...this.jobs.values()].filter((j) => j.startedAt !== null);

  /** LAPSE and RELEASE: back to waiting with the URL it was moved to, or failed if its URL was removed meanwhile. */
  private backToWaiting(c: Callback, event: 'release' | 'lapse'): void {
    this.note(c.removed ? 'fail' : event, c, c.status, c.removed ? 'failed' : 'pending');
    Object.assign(c, {
      status: c.removed ? 'failed' : 'pending',
      nextAttemptAt: c.removed ? null : c.nextAttemptAt,
      leaseUntil: null,
      dest: c.nextDest ?? c.dest,
      nextDest: null,
    });
    if (c.removed)
      this.ends.push({
        cb: c,
        by: 'removed',
        status: 'failed',
        final: false,
        probe: false,
        scheduleAttempts: c.scheduleAttempts,
        attemptCount: c.attemptCount,
        open: false,
        lastError: c.lastError ?? '',
      });
  }

  /** Admission.sweep(): LAPSE, then EXPIRE. */
  sweep(): void {
    for (const c of this.callbacks)
      if (c.status === 'sending' && c.leaseUntil! < this.now) this.backToWaiting(c, 'lapse');
    for (const c of this.callbacks) {
      const { state } = this.dests.get(c.dest)!;
      if (c.status !== 'pending' || state.openedAt === null || !(c.scheduleStartedAt < this.now - SCHEDULE_TOTAL))
        continue;
      const lastError = `destination ${c.dest} unavailable (circuit open since ${new Date(state.openedAt).toISOString()}${state.lastError ? `, last error: ${state.lastError}` : ''}); attempt schedule ended while waiting`;
      Object.assign(c, { status: 'failed', nextAttemptAt: null, lastError });
      this.note('fail', c, 'pending');
      this.ends.push({
        cb: c,
        by: 'expire',
        status: 'failed',
        final: false,
        probe: false,
        scheduleAttempts: c.scheduleAttempts,
        attemptCount: c.attemptCount,
        open: true,
        lastError,
      });
    }
  }

  /** A job's answer at `now`: settleAttempt, the destination's new state, and RECORD. */
  settle(job: Job, result: SendResult, startedAt: number): void {
    this.settleOnly(job, result, startedAt);
    this.start();
  }

  private settleOnly(job: Job, result: SendResult, startedAt: number): void {
    const c = job.cb;
    // The destination the attempt went to: the one the worker loaded (a lapsed callback may have moved since).
    const dest = this.dests.get(job.dest)!;
    const probe = dest.state.openedAt !== null && startedAt >= dest.state.openedAt;
    const s = settleAttempt(
      dest.state,
      {
        row: { destination: job.dest, schedule_attempts: job.scheduleAttempts, attempt_limit: null },
        startedAt,
        answeredAt: this.now,
        result,
      },
      0,
      this.policy,
      cfg,
    );
    const closed = dest.state.openedAt !== null && s.destination.openedAt === null;
    if (result.outcome.kind === 'timeout' && !dest.answered && dest.state.openedAt === null)
      this.firstSilences.push({ dest: job.dest, open: s.destination.openedAt !== null });
    dest.answered ||= result.outcome.kind === 'http';
    dest.state = s.destination;
    // saveDestinations: a closing ends a probe asked for (the fold keeps it otherwise).
    if (closed) this.ask(job.dest, null);
    this.jobs.delete(c.id);
    // RECORD's circuitEvents: a closing makes the destination's callbacks waiting in a backoff due now.
    for (const w of closed ? this.of(job.dest, 'pending') : []) {
      if (w === c || w.nextAttemptAt! <= this.now) continue;
      w.nextAttemptAt = this.now;
      this.note('due now', w, 'pending');
    }
    // RECORD: a row failed meanwhile (its URL removed while the attempt was under way) takes only a delivery.
    if (
      (c.status !== 'sending' && c.status !== 'pending' && s.status !== 'delivered') ||
      c.attemptCount !== job.attemptCount
    )
      return;
    const same = c.scheduleStartedAt === job.scheduleKey;
    const delivered = s.status === 'delivered';
    const removed = c.removed && !delivered;
    const from = c.status;
    c.status = delivered ? s.status : removed ? 'failed' : same ? s.status : 'pending';
    c.scheduleAttempts += same && s.counts ? 1 : 0;
    c.nextAttemptAt = delivered || removed ? null : !same ? this.now : s.delayMs === null ? null : this.now + s.delayMs;
    Object.assign(c, {
      attemptCount: c.attemptCount + 1,
      lastError: removed ? c.lastError : s.lastError,
      leaseUntil: null,
      dest: c.nextDest ?? c.dest,
      nextDest: null,
    });
    this.note(delivered ? 'deliver' : c.status === 'failed' ? 'fail' : 'retry', c, from);
    if (removed) {
      this.ends.push({
        cb: c,
        by: 'removed',
        status: 'failed',
        final: false,
        probe,
        scheduleAttempts: c.scheduleAttempts,
        attemptCount: c.attemptCount,
        open: false,
        lastError: c.lastError ?? '',
      });
    } else if (c.status === 'failed' || (same && isFinal(result))) {
      this.ends.push({
        cb: c,
        by: 'attempt',
        status: c.status,
        final: isFinal(result),
        probe,
        scheduleAttempts: c.scheduleAttempts,
        attemptCount: c.attemptCount,
        open: dest.state.openedAt !== null,
        lastError: s.lastError ?? '',
      });
    }
  }

  /** Time passes; a live worker's request ends by its timeout (before its lease), with what its destination does. */
  tick(ms: number): void {
    const until = this.now + ms;
    for (
      let j;
      (j = this.started().sort((a, b) => a.startedAt! - b.startedAt!)[0]) && j.startedAt! + TIMEOUT_MS <= until;
    ) {
      this.now = Math.max(this.now, j.startedAt! + TIMEOUT_MS);
      this.settle(j, answer(this.dests.get(j.cb.dest)!.behaviour), j.startedAt!);
    }
    this.now = until;
  }

  /** One second of the relay's timer: sweep and a pass; the live workers answer what they hold. */
  timer(b?: Behaviour): PassReport {
    this.tick(1000);
    this.sweep();
    const pass = this.pass();
    for (let started; (started = this.started()).length > 0;)
      for (const j of started) this.settle(j, answer(b ?? this.dests.get(j.cb.dest)!.behaviour), j.startedAt!);
    return pass;
  }

  crash(i: number): void {
    this.workers[i].up = false;
    for (const [id, j] of this.jobs) if (j.worker === i) this.jobs.delete(id);
  }
  restart = (i: number) => void (this.workers[i].up = true);

  /** The callback a redelivery asked to go as a destination's next probe (null: none), in its row and its state. */
  ask(origin: string, id: number | null): void {
    const d = this.dests.get(origin)!;
    d.probe = id;
    d.state = { ...d.state, probeAsked: id !== null };
  }

  /**
   * A redelivery, one callback of any status, as redelivery.ts makes it under the code's rule
   * (redelivery-rules.ts): settled ones on a fresh schedule, a pending one due now, one in flight
   * left to its attempt; its destination, if open, asked for it as the next probe (askProbe).
   * Refused, it changes nothing and the refusal is noted.
   */
  redeliver(c: Callback): boolean {
    const { state } = this.dests.get(c.dest)!;
    // What the lock reads; the circuit too (the rule once refused an open one: it must not look at it).
    const facts = {
      status: c.status,
      test: false,
      urlRemovedAt: c.removed ? new Date(this.now) : null,
      origin: c.dest,
      openedAt: state.openedAt === null ? null : new Date(state.openedAt),
      nextProbeAt: state.nextProbeAt === null ? null : new Date(state.nextProbeAt),
    };
    const move = redeliveryOf(facts);
    if (move instanceof DomainError) {
      this.refusals.push(
        `${c.id} (${c.status}${c.removed ? ', URL removed' : ''}, destination ${state.openedAt === null ? 'closed' : 'open'}): ${move.code}`,
      );
      return false;
    }
    if (move !== 'under_way') this.note('redeliver', c, c.status, 'pending');
    if (move === 'fresh_schedule')
      Object.assign(c, {
        status: 'pending',
        scheduleAttempts: 0,
        scheduleStartedAt: this.now,
        nextAttemptAt: this.now,
      });
    if (move === 'due_now') c.nextAttemptAt = this.now;
    if (state.openedAt !== null) this.ask(c.dest, c.id);
    return true;
  }

  /** An operator's Promote (store/repairs.ts, DUE_NOW): a pending callback due now, its schedule kept. */
  promote(c: Callback): void {
    if (c.status !== 'pending') return;
    c.nextAttemptAt = this.now;
    this.note('due now', c, 'pending');
  }

  /** Retention (store/retention.ts): delivered callbacks past CALLBACK_RETENTION, here every delivered one, deleted. */
  prune(): void {
    for (const c of this.callbacks.filter((x) => x.status === 'delivered')) {
      this.callbacks.splice(this.callbacks.indexOf(c), 1);
      this.note('prune', c, 'delivered', null);
    }
  }

  /**
   * The partner moves the callback's URL (store/url-changes.ts, moveCallbacks): a waiting or failed
   * callback goes to the new destination now; one in flight keeps its destination until it settles.
   */
  move(c: Callback, origin: string): void {
    if (c.status === 'delivered') return;
    this.note('move URL', c, c.status);
    if (c.status === 'sending') Object.assign(c, { nextDest: origin, removed: false });
    else Object.assign(c, { dest: origin, removed: false });
  }

  /** The partner removes the URL (failCallbacksOfRemovedUrl): waiting ones fail now, one in flight when it settles. */
  remove(c: Callback): void {
    if (c.status === 'delivered') return;
    const lastError = 'callback URL removed by the partner (status_callback set to null); no further attempts';
    // REMOVE_URL: a waiting or failed one fails (again) now, one in flight when it comes back.
    this.note(
      c.status === 'sending' ? 'remove URL' : 'fail',
      c,
      c.status,
      c.status === 'sending' ? 'sending' : 'failed',
    );
    if (c.status === 'pending') {
      Object.assign(c, { status: 'failed', nextAttemptAt: null, lastError, removed: true, nextDest: null });
      this.ends.push({
        cb: c,
        by: 'removed',
        status: 'failed',
        final: false,
        probe: false,
        scheduleAttempts: c.scheduleAttempts,
        attemptCount: c.attemptCount,
        open: false,
        lastError,
      });
    } else
      Object.assign(c, { removed: true, nextDest: null, lastError: c.status === 'failed' ? c.lastError : lastError });
  }

  /** When anything can next change: a retry or probe due, a lease lapsing; the relay's timer at the latest. */
  nextEvent(): number {
    const times = [
      this.now + 1000,
      ...this.callbacks.map((c) =>
        c.status === 'pending' ? c.nextAttemptAt! : c.status === 'sending' ? c.leaseUntil! + 1 : Infinity,
      ),
    ];
    for (const { state } of this.dests.values()) if (state.nextProbeAt !== null) times.push(state.nextProbeAt);
    return Math.max(this.now + 1, Math.min(...times.filter((t) => t > this.now)));
  }
}
