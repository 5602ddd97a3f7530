import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Client } from 'pg';
import { DataSource, EntitySubscriberInterface, TransactionCommitEvent, TransactionRollbackEvent } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config.js';
import { CallbackQueue } from './callback-queue.js';
import { CALLBACKS_CHANNEL, RECORDED } from '../callbacks/callback-recorder.js';
import { Metrics } from '../metrics/metrics.js';
import { RepeatLimitedLog } from '../common/repeat-limited-log.js';
import { ClaimedRow, DestinationParking, queued } from './destination-parking.js';

const BATCH = 1000;
const SWEEP_MS = 5000;
const RECONNECT_MS = 1000;
/** Probes due, destinations with room for their parked callbacks, schedules run out while parked. */
const DESTINATION_SWEEP_MS = 1000;
/** Restoring parked counts after Redis lost them. */
const RECONCILE_MS = 10_000;

/** A pending row this late past its attempt time has lost its job (Redis flushed, restarted…). */
const OVERDUE_GRACE = '30 seconds';

/**
 * The outbox relay: moves committed pending callbacks into the queue. Woken right after the
 * commit of every change of this process that recorded callbacks, by `NOTIFY funding_callbacks`
 * (rows written elsewhere) and by a periodic sweep; several instances may run at once (rows are
 * claimed with FOR UPDATE SKIP LOCKED). Redis being down only delays it: the claim is released
 * and the next wake-up or sweep tries again.
 *
 * The relay has one connection of its own: it LISTENs there and runs its few statements there
 * (named, so they are planned once), with `synchronous_commit = off`. A claim is the only thing
 * it writes, and losing one to a database crash only means the rows are relayed again (same job
 * ids); so no commit of the relay waits for a WAL flush on the way from a change to its POST.
 */
/** The columns a job is made of (its name shows message, company and destination). */
type RelayedRow = Pick<ClaimedRow, 'id' | 'next_attempt_at' | 'message' | 'company_id' | 'destination'>;

@Injectable()
export class CallbackRelay implements OnModuleInit, OnModuleDestroy {
  private readonly log = new Logger('CallbackRelay');
  private readonly warnings = new RepeatLimitedLog((m) => this.log.warn(m));
  private conn: Client | null = null;
  private timers: NodeJS.Timeout[] = [];
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly db: DataSource,
    private readonly queue: CallbackQueue,
    private readonly metrics: Metrics,
    private readonly parking: DestinationParking,
  ) {}

  async onModuleInit(): Promise<void> {
    this.db.subscribers.push(this.afterCommit);
    await this.listen();
    this.timers.push(setInterval(() => this.sweep(), SWEEP_MS));
    this.timers.push(setInterval(() => this.sweepDestinations(), DESTINATION_SWEEP_MS));
    this.timers.push(setInterval(() => this.reconcile(), RECONCILE_MS));
    this.wake();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    const i = this.db.subscribers.indexOf(this.afterCommit);
    if (i >= 0) this.db.subscribers.splice(i, 1);
    this.timers.forEach(clearInterval);
    await this.running?.catch(() => undefined);
    await this.destinationSweep?.catch(() => undefined);
    await this.conn?.end().catch(() => undefined);
  }

  /**
   * Wakes the relay once a transaction that recorded callbacks has committed (TypeORM also
   * reports a savepoint's release as a commit: the transaction is still active then).
   */
  private readonly afterCommit: EntitySubscriberInterface = {
    afterTransactionCommit: (e: TransactionCommitEvent) => {
      if (e.queryRunner.isTransactionActive || !e.queryRunner.data?.[RECORDED]) return;
      delete e.queryRunner.data[RECORDED];
      this.wake();
    },
    afterTransactionRollback: (e: TransactionRollbackEvent) => {
      if (!e.queryRunner.isTransactionActive && e.queryRunner.data) delete e.queryRunner.data[RECORDED];
    },
  };

  /** Runs a relay pass now, or right after the one in progress: bursts of commits coalesce. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.relayUnenqueued();
        } catch (e) {
          this.warnings.warn(`relay pass failed, retrying on the next sweep: ${(e as Error).message}`);
          break;
        }
      } while (this.again && !this.stopped);
    })().finally(() => {
      this.running = null;
    });
  }

  /**
   * One pass: every committed, never-enqueued pending row goes to the queue, in batches. A batch
   * is claimed in one statement (several relays skip each other's rows), each row asks its
   * destination for a slot, and the rows that got one are added to Redis; the others are parked
   * until their destination can take them. If the add fails the claim and the slots are released
   * for the next wake-up or sweep; if this process dies between the two, the overdue sweep
   * re-adds the rows. Either way nothing is lost, and a job added twice is one job (its id is the
   * callback id).
   */
  async relayUnenqueued(): Promise<number> {
    let total = 0;
    // Each batch's parked rows are written while the next batch is claimed and dispatched; at most
    // two parkings are under way (a dead destination's 100,000 rows must not take every pooled
    // connection the workers load and record with). The pass ends once every parking has, and
    // fails with the first error, its own or a parking's.
    const parkings: Promise<Error | null>[] = [];
    let error: unknown = null;
    try {
      for (;;) {
        const conn = this.connection();
        // The claim also notes each (partner, destination) pair, for the destinations lists.
        const { rows } = await conn.query<ClaimedRow>({
          name: 'callback-relay-claim',
          text: `WITH claimed AS (
               UPDATE callbacks c SET enqueued_at = now()
                 FROM (SELECT id FROM callbacks
                        WHERE status = 'pending' AND enqueued_at IS NULL AND parked_at IS NULL
                        ORDER BY seq LIMIT ${BATCH} FOR UPDATE SKIP LOCKED) claim
                WHERE c.id = claim.id
            RETURNING c.id, c.seq, c.next_attempt_at, c.created_at, c.destination, c.partner_id, c.message, c.company_id
             ), seen AS (
               INSERT INTO callback_destinations (partner_id, origin)
               SELECT DISTINCT partner_id, destination FROM claimed
               ON CONFLICT DO NOTHING
             )
             SELECT id, seq, next_attempt_at, created_at, destination, message, company_id FROM claimed`,
        });
        if (rows.length === 0) break;
        rows.sort((a, b) => Number(a.seq) - Number(b.seq));
        const { sent, parking } = await this.parking.dispatch(rows, 'queue');
        parkings.push(parking);
        const now = Date.now();
        for (const r of sent) this.metrics.relayLag.observe(Math.max(0, now - r.created_at.getTime()) / 1000);
        total += rows.length;
        if (rows.length < BATCH) break;
        if (parkings.length >= 2) await parkings[parkings.length - 2];
      }
    } catch (e) {
      error = e;
    }
    const failed = (await Promise.all(parkings)).find((e) => e !== null);
    if (error !== null || failed) throw error ?? failed;
    return total;
  }

  /** Re-adds pending rows whose job should have run long ago; an existing job makes it a no-op. */
  async requeueOverdue(): Promise<number> {
    const { rows } = await this.connection().query<RelayedRow>({
      name: 'callback-relay-overdue',
      text: `SELECT id, NULL::timestamptz AS next_attempt_at, message, company_id, destination FROM callbacks
              WHERE status = 'pending' AND enqueued_at IS NOT NULL AND next_attempt_at < now() - interval '${OVERDUE_GRACE}'
              ORDER BY next_attempt_at LIMIT ${BATCH}`,
    });
    // A finished job kept for the dashboard would make BullMQ ignore the add.
    await this.queue.removeFinished(rows.map((r) => r.id));
    await this.queue.add(rows.map(queued));
    return rows.length;
  }

  private sweep(): void {
    this.wake();
    this.requeueOverdue().catch((e) => this.warnings.warn(`overdue sweep failed: ${(e as Error).message}`));
  }

  private destinationSweep: Promise<void> | null = null;

  /** One destination sweep at a time in this process (a slow one is not piled upon). */
  private sweepDestinations(): void {
    if (this.destinationSweep || this.stopped) return;
    this.destinationSweep = this.parking
      .sweep()
      .catch((e) => this.warnings.warn(`destination sweep failed: ${(e as Error).message}`))
      .finally(() => {
        this.destinationSweep = null;
      });
  }

  private reconcile(): void {
    this.parking.reconcile().catch((e) => this.warnings.warn(`destination reconcile failed: ${(e as Error).message}`));
  }

  private connection(): Client {
    if (!this.conn) throw new Error('the relay is reconnecting to PostgreSQL');
    return this.conn;
  }

  /**
   * The relay's own connection (the pool's connections come and go). Lost or never made
   * (PostgreSQL restarting, unreachable), it is tried again every second until it is back.
   */
  private async listen(): Promise<void> {
    if (this.stopped) return;
    const client = new Client({ connectionString: this.config.databaseUrl, options: '-c synchronous_commit=off' });
    client.on('notification', () => this.wake());
    let lost = false;
    const retry = () => {
      if (lost) return;
      lost = true;
      if (this.conn === client) this.conn = null;
      client.end().catch(() => undefined);
      if (!this.stopped) setTimeout(() => void this.listen(), RECONNECT_MS).unref();
    };
    client.on('error', (e) => {
      this.warnings.warn(`relay connection lost, reconnecting: ${e.message}`);
      retry();
    });
    client.on('end', retry);
    try {
      await client.connect();
      await client.query(`LISTEN ${CALLBACKS_CHANNEL}`);
    } catch (e) {
      this.warnings.warn(`relay cannot reach PostgreSQL, retrying: ${(e as Error).message}`);
      retry();
      return;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.conn = client;
    this.wake(); // whatever committed while we were not listening
  }
}
