// Bounded tables: delivered callbacks (with their attempts) older than CALLBACK_RETENTION,
// idempotency keys past their 24 h, and portal links and sessions no longer usable go, in small
// batches, in the background. Failed and pending callbacks are kept whatever their age: they
// still need an operator or a delivery.
import { RetentionStore, RETENTION_BATCH } from '../callbacks/index.js';
import { PortalPruning } from '../partners/index.js';
import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { Pool, PoolClient } from 'pg';
import { APP_CONFIG, AppConfig, IdempotencyPruning, RepeatLimitedLog, SqlPool } from '../platform/index.js';
import { Metrics } from './metrics.js';
import { RetentionLockRepository } from './retention-lock.repository.js';

/** Time between two pruning passes of a process (a pass runs until nothing old is left). */
export const RETENTION_INTERVAL_MS = Symbol('RETENTION_INTERVAL_MS');
export { RETENTION_BATCH };
export const DEFAULT_RETENTION_INTERVAL_MS = 60_000;
/** The first pass comes soon after start: a deployment back from a long stop has catching up to do. */
const FIRST_PASS_DELAY_MS = 5_000;

/**
 * After a batch, a pause of at least this, and of at least nine times the batch's own duration:
 * a pass keeps one PostgreSQL backend busy at most a tenth of the time, so deliveries keep their
 * pace while a backlog of old rows is worked off (docs/benchmarks.md, the capacity model).
 */
const MIN_PAUSE_MS = 100;
const PAUSE_PER_BATCH_TIME = 9;
/**
 * While deliveries wait in the queue, pruning keeps to a fiftieth of one backend instead of a
 * tenth: on a small machine PostgreSQL's CPU is the delivery path's too (docs/benchmarks.md).
 * Idle, it catches up. Callbacks waiting for an open destination are not under way, so a long
 * outage does not slow it.
 */
const PAUSE_PER_BATCH_TIME_WHILE_DELIVERING = 49;
const SHUTDOWN_WAIT_MS = 5_000;

export interface PruneResult {
  callbacks: number;
  attempts: number;
  idempotencyKeys: number;
}

@Injectable()
export class CallbackRetention implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly log = new Logger('CallbackRetention');
  private readonly errors = new RepeatLimitedLog((m) => this.log.warn(m));
  private readonly pool: Pool;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopping = false;
  private wake: (() => void) | null = null;

  constructor(
    sql: SqlPool,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(RETENTION_INTERVAL_MS) private readonly intervalMs: number,
    private readonly metrics: Metrics,
    private readonly store: RetentionStore,
    private readonly portal: PortalPruning,
    private readonly keys: IdempotencyPruning,
    private readonly lock: RetentionLockRepository,
  ) {
    this.pool = sql.pool;
  }

  onApplicationBootstrap(): void {
    this.schedule(Math.min(FIRST_PASS_DELAY_MS, this.intervalMs));
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.wake?.();
    // A batch stops at its statement's end; one stuck on an unreachable PostgreSQL is not waited
    // for (the pool's closing ends it, and the batch's transaction rolls back).
    await Promise.race([this.running, new Promise((r) => setTimeout(r, SHUTDOWN_WAIT_MS).unref())]);
  }

  /**
   * One pass: batches until nothing old is left. Returns what it deleted, or null when another
   * process holds the retention lock (it is pruning; this one need not).
   */
  async prune(): Promise<PruneResult | null> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    // pg-pool listens for a checked-out client's errors only while it is idle in the pool: a
    // connection lost mid-pass (PostgreSQL restarting) would otherwise be an unhandled 'error'
    // event that ends the process. The pass's next query fails instead.
    const lost = (e: Error) => (broken = e);
    client.on('error', lost);
    try {
      // A session lock on this connection: released by the unlock below or, should the process
      // die, by PostgreSQL when the connection goes.
      if (!(await this.lock.tryLock(client))) return null;
      try {
        return await this.batches(client);
      } finally {
        await this.lock.unlock(client);
      }
    } catch (e) {
      broken = e as Error;
      throw e;
    } finally {
      // A connection that failed mid-pass is dropped, not returned to the pool with a lock on it.
      client.off('error', lost);
      client.release(broken);
    }
  }

  private async batches(client: PoolClient): Promise<PruneResult> {
    const total: PruneResult = { callbacks: 0, attempts: 0, idempotencyKeys: 0 };
    let callbacksLeft = true;
    let othersLeft = true;
    while ((callbacksLeft || othersLeft) && !this.stopping) {
      const started = Date.now();
      if (callbacksLeft) {
        const r = await this.store.pruneCallbacks(client, this.config.callbackRetentionMs);
        total.callbacks += r.callbacks;
        total.attempts += r.attempts;
        this.metrics.retentionPruned.inc({ table: 'callbacks' }, r.callbacks);
        this.metrics.retentionPruned.inc({ table: 'callback_attempts' }, r.attempts);
        callbacksLeft = r.callbacks === RETENTION_BATCH;
      }
      if (othersLeft) {
        const keys = await this.keys.prune(client, RETENTION_BATCH);
        const events = await this.store.pruneUnsentEvents(client, this.config.callbackRetentionMs);
        const { links, sessions } = await this.portal.prune(client, RETENTION_BATCH);
        total.idempotencyKeys += keys;
        this.metrics.retentionPruned.inc({ table: 'idempotency_keys' }, keys);
        this.metrics.retentionPruned.inc({ table: 'operational_events' }, events);
        this.metrics.retentionPruned.inc({ table: 'portal_links' }, links);
        this.metrics.retentionPruned.inc({ table: 'portal_sessions' }, sessions);
        othersLeft = [keys, events, links, sessions].some((n) => n === RETENTION_BATCH);
      }
      if (callbacksLeft || othersLeft) {
        const factor = (await this.deliveriesWaiting()) ? PAUSE_PER_BATCH_TIME_WHILE_DELIVERING : PAUSE_PER_BATCH_TIME;
        await this.pause(Math.max(MIN_PAUSE_MS, factor * (Date.now() - started)));
      }
    }
    return total;
  }

  private schedule(delayMs = this.intervalMs): void {
    if (this.stopping) return;
    this.timer = setTimeout(() => {
      this.running = this.prune()
        .catch((e: Error) => this.errors.warn(`retention pass failed, next in ${this.intervalMs} ms: ${e.message}`))
        .finally(() => {
          this.running = null;
          this.schedule();
        });
    }, delayMs);
    this.timer.unref();
  }

  /** Whether deliveries are under way (admitted callbacks); PostgreSQL unreachable: as if none. */
  private async deliveriesWaiting(): Promise<boolean> {
    return this.store.deliveriesUnderWay().catch(() => false);
  }

  /** A pause that shutdown cuts short. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        resolve();
      }
      this.wake = done;
    });
  }
}
