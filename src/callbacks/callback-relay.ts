import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config.js';
import { CallbackQueue } from './callback-queue.js';
import { CALLBACKS_CHANNEL } from './callback-recorder.js';
import { Metrics } from '../metrics/metrics.js';

const BATCH = 1000;
const SWEEP_MS = 5000;
/** A pending row this late past its attempt time has lost its job (Redis flushed, restarted…). */
const OVERDUE_GRACE = '30 seconds';

/**
 * The outbox relay: moves committed pending callbacks into the queue. Woken by the commit of
 * every change (Postgres NOTIFY) and by a periodic sweep; several instances may run at once
 * (rows are claimed with FOR UPDATE SKIP LOCKED). Redis being down only delays it: the claim
 * rolls back and the next wake-up or sweep tries again.
 */
@Injectable()
export class CallbackRelay implements OnModuleInit, OnModuleDestroy {
  private readonly log = new Logger('CallbackRelay');
  private listener: Client | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly queue: CallbackQueue,
    private readonly metrics: Metrics,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.listen();
    this.timer = setInterval(() => this.sweep(), SWEEP_MS);
    this.wake();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running?.catch(() => undefined);
    await this.listener?.end().catch(() => undefined);
  }

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
          this.log.warn(`relay pass failed, retrying on the next sweep: ${(e as Error).message}`);
          break;
        }
      } while (this.again && !this.stopped);
    })().finally(() => {
      this.running = null;
    });
  }

  /** One pass: every committed, never-enqueued pending row goes to the queue, in batches. */
  async relayUnenqueued(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.db.transaction(async (m) => {
        const rows: { id: string; next_attempt_at: Date | null; created_at: Date }[] = await m.query(
          `SELECT id, next_attempt_at, created_at FROM callbacks
            WHERE status = 'pending' AND enqueued_at IS NULL
            ORDER BY seq LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`,
        );
        if (rows.length === 0) return 0;
        await this.queue.add(rows.map((r) => ({ id: r.id, nextAttemptAt: r.next_attempt_at })));
        await m.query(`UPDATE callbacks SET enqueued_at = now() WHERE id = ANY($1::uuid[])`, [rows.map((r) => r.id)]);
        const now = Date.now();
        for (const r of rows) this.metrics.relayLag.observe(Math.max(0, now - r.created_at.getTime()) / 1000);
        return rows.length;
      });
      total += n;
      if (n < BATCH) return total;
    }
  }

  /** Re-adds pending rows whose job should have run long ago; an existing job makes it a no-op. */
  async requeueOverdue(): Promise<number> {
    const rows: { id: string }[] = await this.db.query(
      `SELECT id FROM callbacks
        WHERE status = 'pending' AND enqueued_at IS NOT NULL AND next_attempt_at < now() - interval '${OVERDUE_GRACE}'
        ORDER BY next_attempt_at LIMIT ${BATCH}`,
    );
    await this.queue.add(rows.map((r) => ({ id: r.id, nextAttemptAt: null })));
    return rows.length;
  }

  private sweep(): void {
    this.wake();
    this.requeueOverdue().catch((e) => this.log.warn(`overdue sweep failed: ${(e as Error).message}`));
  }

  /** A dedicated connection LISTENs: the pool's connections come and go. Reconnects on loss. */
  private async listen(): Promise<void> {
    if (this.stopped) return;
    const client = new Client({ connectionString: this.config.databaseUrl });
    client.on('notification', () => this.wake());
    client.on('error', () => {
      client.end().catch(() => undefined);
      if (this.listener === client) this.listener = null;
      setTimeout(() => this.listen().catch(() => undefined), 1000).unref();
    });
    await client.connect();
    await client.query(`LISTEN ${CALLBACKS_CHANNEL}`);
    this.listener = client;
    this.wake(); // whatever committed while we were not listening
  }
}
