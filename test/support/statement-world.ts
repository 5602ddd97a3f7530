/**
 * The delivery core's real statements on a scratch PostgreSQL database, driven step by step: the
 * admission pass (CANDIDATES, ADMIT), sweep (LAPSE, EXPIRE, FLUSH_NOTICES), each worker process's
 * settlement (RECORD and destination writes, with the operational events they write), the
 * recorder's INSERT, URL changes and the operators' redelivery, imported from the code. Time passes
 * by moving every stored time back (PostgreSQL's clock cannot be moved). The random histories of
 * test/delivery-statements.e2e-spec.ts and test/operational-events.e2e-spec.ts run on it, with
 * the steps of statement-steps.ts.
 */
import { AuditLog } from '../../src/operators/audit/audit-log.js';
import { AuditEntryRepository } from '../../src/operators/audit/audit-entry.repository.js';
import { destinationKey, originOfKey } from '../../src/callbacks/callback-destination.js';
import { CallbackMessage } from '../../src/callbacks/callback-message.js';
import { Redelivery } from '../../src/callbacks/redelivery.js';
import { BulkReplay, DEFAULT_REPLAY_LIMIT } from '../../src/callbacks/bulk-replay.js';
import { CallbackRepairs } from '../../src/callbacks/callback-repairs.js';
import { RetentionStore } from '../../src/callbacks/store/retention.js';
import { AdmissionStore } from '../../src/callbacks/store/admission-store.js';
import { SettlementStore } from '../../src/callbacks/store/settlement-store.js';
import type { DestinationRow } from '../../src/callbacks/store/destination-states.js';
import { CallbackRecorder } from '../../src/callbacks/callback-recorder.js';
import { CallbackUrlFollowing } from '../../src/callbacks/store/url-changes.js';
import { RepairRepository } from '../../src/callbacks/store/repairs.js';
import { ReplayRepository } from '../../src/callbacks/store/replay.js';
import { CallbackInserts } from '../../src/callbacks/store/recording.js';
import type { AppConfig } from '../../src/platform/config/app-config.js';
import { microsKey } from '../../src/platform/database/sql.js';
import { TransactionRunner } from '../../src/platform/database/transaction-runner.js';
import { Admission, LEASE_MARGIN_MS } from '../../src/delivery/admission.js';
import { CallbackQueue, jobsOf } from '../../src/delivery/callback-queue.js';
import type { SettlingRow } from '../../src/delivery/settle-attempt.js';
import { Settlement } from '../../src/delivery/settlement.js';
import type { Metrics } from '../../src/operations/metrics.js';
import { answer, Behaviour } from './delivery-model.js';
import type { ScratchDatabase } from './scratch-database.js';

export const ORIGINS = ['https://a.test', 'https://b.test', 'https://c.test'];
export const SCHEDULE = [1000, 2000, 4000];
export const SCHEDULE_TOTAL = SCHEDULE.reduce((a, b) => a + b, 0);
export const MAX_ATTEMPTS = SCHEDULE.length + 1;
export const TIMEOUT_MS = 5000;
export const LEASE_MS = TIMEOUT_MS + LEASE_MARGIN_MS;
export const WINDOW_MAX = 4;
export const READY_WINDOW = 6;
export const PROBE_LAST = 4000;
/**
 * Retention's CALLBACK_RETENTION: as long as an attempt may take, so that no job left in the
 * world (a lapsed one's) holds a callback retention deleted; a deployment's is days.
 */
export const RETENTION_MS = TIMEOUT_MS;

/** A destination's answer, as the model's (no Retry-After: this test's time moves by hand). */
export const answerOf = (b: Behaviour) => answer(b, TIMEOUT_MS, null);

/** One callback of a job a worker holds: its id, the job's lease, and when (real clock) and at what shift it was sent. */
export interface Entry {
  id: string;
  /** Its destination when admitted: where its request goes, whatever becomes of its row meanwhile. */
  dest: string;
  lease: string;
  worker: number;
  sentAt: number;
  shiftAtSend: number;
}

export interface CallbackRow {
  id: string;
  destination: string;
  status: string;
  next_attempt_at: Date | null;
  lease_until: Date | null;
  delivered_at: Date | null;
  schedule_attempts: number;
  attempt_count: number;
  last_error: string | null;
  url_removed_at: Date | null;
}

export class World {
  readonly behaviour = new Map<string, Behaviour>();
  readonly workers: { slots: number; up: boolean }[];
  entries: Entry[] = [];
  /** How far every stored time has been moved back so far (ms). */
  shift = 0;
  /** Called after each settlement's statements (a test that reads what each one wrote). */
  afterSettle: () => Promise<void> = () => Promise.resolve();
  /** Each worker process's settlement: what each remembers of destinations is its own. */
  private readonly settlements: Settlement[];
  private readonly admission: Admission;
  private readonly admin: Redelivery;
  private readonly replay: BulkReplay;
  private readonly repairs: CallbackRepairs;
  /** Whether the queue refuses the jobs of a pass (Redis down). */
  private refusing = false;
  private readonly writes: TransactionRunner;
  private admitted: string[] = [];

  constructor(
    private readonly s: ScratchDatabase,
    private readonly config: AppConfig,
    private readonly metrics: Metrics,
    private readonly companies: { partnerId: string; companyId: string }[],
    destinations: number,
    workerSlots: number[],
  ) {
    // One destination per partner at each origin: each answers as its own behaviour says.
    const partners = [...new Set(companies.map((c) => c.partnerId))];
    for (const o of ORIGINS.slice(0, destinations))
      for (const p of partners) this.behaviour.set(destinationKey(p, o), 'ok');
    this.workers = workerSlots.map((slots) => ({ slots, up: true }));
    const queue = {
      add: async (ids: string[], lease: string, workers: number) => {
        if (this.refusing) throw REFUSED;
        this.take(jobsOf(ids, workers), lease, await this.destinationsOf(ids));
      },
    } as unknown as CallbackQueue;
    this.admission = new Admission(config, queue, metrics, new AdmissionStore());
    this.settlements = this.workers.map(
      () => new Settlement(config, metrics, { wake: () => undefined } as never, new SettlementStore(s.sql)),
    );
    this.writes = new TransactionRunner(s.db, { wake: () => undefined });
    this.admin = new Redelivery(this.writes, new AuditLog(new AuditEntryRepository(s.db)), new RepairRepository());
    this.replay = new BulkReplay(
      s.db,
      this.writes,
      new AuditLog(new AuditEntryRepository(s.db)),
      DEFAULT_REPLAY_LIMIT,
      new ReplayRepository(),
    );
    this.repairs = new CallbackRepairs(
      this.writes,
      new AuditLog(new AuditEntryRepository(s.db)),
      new RepairRepository(),
    );
  }

  /** The destinations' keys (callbacks.destination): one per partner and origin. */
  get keys(): string[] {
    return [...this.behaviour.keys()];
  }

  get origins(): string[] {
    return [...new Set(this.keys.map(originOfKey))];
  }

  /** The key of a company's partner's destination at an origin. */
  keyOf(origin: string, company = 0): string {
    return destinationKey(this.companies[company % this.companies.length].partnerId, origin);
  }

  /** The live workers' rows, as WorkerRegistry announces them (an hour ahead: time moves only the callbacks' clocks). */
  async announce(): Promise<void> {
    await this.s.pool.query(`DELETE FROM delivery_workers`);
    for (const [i, w] of this.workers.entries()) {
      if (w.up)
        await this.s.pool.query(
          `INSERT INTO delivery_workers (id, concurrency, expires_at) VALUES ($1, $2, now() + interval '1 hour')`,
          [`w${i}`, w.slots],
        );
    }
  }

  async commit(origin: string, company = 0): Promise<void> {
    const c = this.companies[company % this.companies.length];
    const event = {
      message: CallbackMessage.CreditLimitUpdated,
      url: `${origin}/cb?token=t`,
      partnerId: c.partnerId,
      ids: { ...c, withdrawalId: null, limitRequestId: null, loanId: null },
    };
    await this.writes.transaction((m) => new CallbackRecorder(new CallbackInserts()).record(m, [event]));
  }

  /** An open circuit of a company's partner's destination at the origin whose probe is due now (as settlement leaves one). */
  async openCircuit(origin: string, company = 0): Promise<void> {
    await this.s.pool.query(
      `INSERT INTO destinations (key, partner_id, origin, window_size, failures, opened_at, next_probe_at, probe_ms, last_error, version)
       VALUES ($1, $2, $3, 1, 3, now() - interval '1 minute', now(), 1000, 'HTTP 503', 1)
       ON CONFLICT (key) DO UPDATE SET window_size = 1, failures = 3, opened_at = now() - interval '1 minute', next_probe_at = now(), probe_ms = 1000, last_error = 'HTTP 503', version = destinations.version + 1`,
      [this.keyOf(origin, company), this.companies[company % this.companies.length].partnerId, origin],
    );
  }

  /** The partner's PATCH of a company's URL (store/url-changes.ts): moved to another destination, or removed (null). */
  async moveUrl(company: number, origin: string | null): Promise<void> {
    const c = this.companies[company % this.companies.length];
    const resources = [{ companyId: c.companyId, id: c.companyId }];
    const of = {
      property: 'status_callback',
      messages: [CallbackMessage.CreditLimitUpdated],
      key: 'companyId' as const,
      resources,
    };
    await this.writes.transaction((m) =>
      new CallbackUrlFollowing().followUrl(m, of, origin === null ? null : `${origin}/moved`),
    );
  }

  private async destinationsOf(ids: string[]): Promise<Map<string, string>> {
    const { rows } = await this.s.pool.query<{ id: string; destination: string }>(
      `SELECT id, destination FROM callbacks WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    return new Map(rows.map((r) => [r.id, r.destination]));
  }

  /** Admission's pass; returns the ids it admitted. */
  async pass(): Promise<string[]> {
    this.admitted = [];
    await this.admission.admit(this.s.pool);
    return this.admitted;
  }

  sweep = () => this.admission.sweep(this.s.pool);

  /** Admission's pass while Redis refuses its jobs: what it admitted goes back (RELEASE), and the pass fails. */
  async refusedPass(): Promise<void> {
    this.refusing = true;
    try {
      await this.admission.admit(this.s.pool);
    } catch (e) {
      if (e !== REFUSED) throw e;
    } finally {
      this.refusing = false;
    }
  }

  /** Retention's batch (store/retention.ts): delivered callbacks older than RETENTION_MS deleted, with their attempts and events. */
  async prune(): Promise<void> {
    const client = await this.s.sql.pool.connect();
    try {
      await new RetentionStore(this.s.sql).pruneCallbacks(client, RETENTION_MS);
    } finally {
      client.release();
    }
  }

  /** BullMQ hands each job to a live worker: here the one holding the fewest callbacks. */
  private take(jobs: string[][], lease: string, destinations: Map<string, string>): void {
    const live = this.workers.map((_, i) => i).filter((i) => this.workers[i].up);
    if (live.length === 0) throw new Error(`admitted ${jobs.flat().join()} with no live worker`);
    for (const ids of jobs) {
      const worker = [...live].sort(
        (a, b) => this.entries.filter((e) => e.worker === a).length - this.entries.filter((e) => e.worker === b).length,
      )[0];
      for (const id of ids)
        this.entries.push({
          id,
          dest: destinations.get(id)!,
          lease,
          worker,
          sentAt: Date.now(),
          shiftAtSend: this.shift,
        });
      this.admitted.push(...ids);
    }
  }

  /** A worker's delivery of one entry: loaded as callback-delivery.ts loads it, answered, and recorded. */
  async settle(e: Entry, b: Behaviour | null, lateMs = 0): Promise<void> {
    this.entries = this.entries.filter((x) => x !== e);
    const { rows } = await this.s.pool.query<SettlingRow & { status: string; lease: string | null }>(
      `SELECT id, partner_id, destination, attempt_count, schedule_attempts, test, restarted_by, ${microsKey('schedule_started_at')} AS schedule_key, status, ${microsKey('lease_until')} AS lease FROM callbacks WHERE id = $1`,
      [e.id],
    );
    const row = rows[0];
    if (row.status !== 'sending' || row.lease !== e.lease) return; // not this job's any more: left alone
    const startedAt = e.sentAt - (this.shift - e.shiftAtSend);
    await this.settlements[e.worker].settle({
      row,
      startedAt,
      answeredAt: Math.min(Date.now(), startedAt + lateMs),
      result: answerOf(b ?? this.behaviour.get(row.destination)!),
      sent: { 'webhook-id': row.id },
    });
    const refused = settlementFaults.splice(0);
    if (refused.length > 0) throw new Error(`settlement could not record: ${refused.join('; ')}`);
    await this.afterSettle();
  }

  /** Time passes: every stored time moves back by `ms` (and every job's lease with it); requests in flight past their timeout answer first. */
  async tick(ms: number): Promise<void> {
    for (const e of [...this.entries])
      if (Date.now() - e.sentAt + (this.shift - e.shiftAtSend) + ms >= TIMEOUT_MS) await this.settle(e, null);
    const back = `- $1 * interval '1 millisecond'`;
    await this.s.pool.query(
      `UPDATE callbacks SET next_attempt_at = next_attempt_at ${back}, lease_until = lease_until ${back}, schedule_started_at = schedule_started_at ${back},
              created_at = created_at ${back}, delivered_at = delivered_at ${back}`,
      [ms],
    );
    await this.s.pool.query(
      `UPDATE destinations SET opened_at = opened_at ${back}, next_probe_at = next_probe_at ${back}, last_ok_at = last_ok_at ${back}, version = version + 1`,
      [ms],
    );
    this.entries = this.entries.map((e) => ({ ...e, lease: String(BigInt(e.lease) - BigInt(ms) * 1000n) }));
    this.shift += ms;
    await this.s.pool.query(`UPDATE operational_events SET created_at = created_at ${back}`, [ms]);
    await this.s.pool.query(
      `UPDATE failure_notices SET window_ends_at = window_ends_at ${back}, emitted_at = emitted_at ${back}, emitted_from = emitted_from ${back},
              emitted_to = emitted_to ${back}, pending_from = pending_from ${back}, pending_to = pending_to ${back}`,
      [ms],
    );
    // The settlements keep what they remember of destinations: the version each write bumped makes their next write fold again.
  }

  async crash(i: number): Promise<void> {
    this.workers[i].up = false;
    this.entries = this.entries.filter((e) => e.worker !== i);
    await this.announce();
  }

  async restart(i: number): Promise<void> {
    this.workers[i].up = true;
    await this.announce();
  }

  /** The operator's redelivery, as the bootstrap operator (its audit entry is written with it). */
  redeliver = async (id: string) => {
    const [operator] = (await this.s.pool.query<{ id: string }>(`SELECT id FROM operators WHERE name = 'admin'`)).rows;
    await this.admin.redeliver(id, {
      actor: { operator: { id: operator.id, name: 'admin', role: 'admin' }, action: 'callback.redeliver' },
    });
  };

  /** The operator's Promote of a pending callback (callback-repairs.ts): due now, its schedule kept. */
  promote = async (id: string) => {
    const [operator] = (await this.s.pool.query<{ id: string }>(`SELECT id FROM operators WHERE name = 'admin'`)).rows;
    await this.repairs.promote(
      { operator: { id: operator.id, name: 'admin', role: 'admin' }, action: 'callback.promote' },
      id,
    );
  };

  /**
   * The operator's bulk redelivery of every failed callback, as the bootstrap operator: of each
   * destination still open, the oldest goes as its next probe, the rest wait for it.
   */
  redeliverFailed = async (): Promise<number> => {
    const [operator] = (await this.s.pool.query<{ id: string }>(`SELECT id FROM operators WHERE name = 'admin'`)).rows;
    return this.replay.replayAsOperator(
      { operator: { id: operator.id, name: 'admin', role: 'admin' }, action: 'callback.redeliver-failed' },
      {},
    );
  };

  /** The callbacks' leases, as microsKey writes them (and a job carries them). */
  async leases(ids: string[]): Promise<Map<string, string>> {
    const { rows } = await this.s.pool.query<{ id: string; lease: string }>(
      `SELECT id, ${microsKey('lease_until')} AS lease FROM callbacks WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    return new Map(rows.map((r) => [r.id, r.lease]));
  }

  async callbacks(): Promise<CallbackRow[]> {
    return (
      await this.s.pool.query<CallbackRow>(
        `SELECT id, destination, status, next_attempt_at, lease_until, delivered_at, schedule_attempts, attempt_count, last_error, url_removed_at FROM callbacks ORDER BY seq`,
      )
    ).rows;
  }

  async destinations(): Promise<(DestinationRow & { now: number })[]> {
    const ms = (column: string) => `(extract(epoch FROM d.${column}) * 1000)::float8 AS ${column}`;
    const times = ['opened_at', 'next_probe_at', 'last_ok_at'].map(ms).join(', ');
    return (
      await this.s.pool.query<DestinationRow & { now: number }>(
        `SELECT d.key, d.partner_id, d.origin, d.window_size, d.failures, d.probe_ms, d.last_error, d.version::text AS version, d.probe_id, ${times},
                (extract(epoch FROM now()) * 1000)::float8 AS now FROM destinations d`,
      )
    ).rows;
  }

  /** How long until anything is due: a retry, a probe, a lease lapsing; at most a second, at least a millisecond. */
  async untilNext(): Promise<number> {
    const { rows } = await this.s.pool.query<{ ms: number | null }>(
      `SELECT (extract(epoch FROM least((SELECT min(next_attempt_at) FROM callbacks WHERE status = 'pending' AND next_attempt_at > now()),
                                        (SELECT min(lease_until) FROM callbacks WHERE status = 'sending'),
                                        (SELECT min(next_probe_at) FROM destinations WHERE next_probe_at > now())) - now()) * 1000)::float8 AS ms`,
    );
    return Math.max(1, Math.min(1000, Math.ceil((rows[0].ms ?? 1000) + 1)));
  }
}

/**
 * What settlement said it could not record, since the last settle: a statement PostgreSQL refused
 * fails the history, rather than being retried until it passes (settlement.ts waits out outages).
 */
export const settlementFaults: string[] = [];

/** What the queue throws while it refuses jobs. */
const REFUSED = new Error('the queue refused the jobs (a test step)');
