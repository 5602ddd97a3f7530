import { Inject, Injectable, Logger, OnApplicationBootstrap, BeforeApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DelayedError, Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config.js';
import { createRedis } from '../database/redis.js';
import { Metrics } from '../metrics/metrics.js';
import { CALLBACK_QUEUE, DeliverJobData } from './callback-queue.js';
import { CallbackSender, SendResult } from './callback-sender.js';
import { signatureHeader } from './callback-signature.js';
import { Decision, RetryPolicy } from './retry-policy.js';

interface DeliveryRow {
  id: string;
  url: string;
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

/** A job that runs this much before its row's attempt time was re-added early: wait for the row. */
const EARLY_TOLERANCE_MS = 1000;

/**
 * Delivers one callback per job: load the row (the database is the record of truth), sign the
 * stored body, POST it, and record the attempt and the callback's new state in one statement.
 */
@Injectable()
export class CallbackDelivery {
  private readonly policy: RetryPolicy;
  private readonly userAgent: string;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly sender: CallbackSender,
    private readonly metrics: Metrics,
  ) {
    this.policy = new RetryPolicy(config.callbackRetryScheduleMs);
    this.userAgent = `funding-service-callbacks/${config.version}`;
  }

  /** Returns when the next attempt is due (ms epoch), or null when nothing more is to be done. */
  async deliver(callbackId: string): Promise<{ retryAt: number } | null> {
    const [row]: DeliveryRow[] = await this.db.query(
      `SELECT c.id, c.url, c.body, c.status, c.schedule_attempts, c.attempt_count, c.next_attempt_at, c.created_at,
              p.signing_secret, p.previous_signing_secret, p.previous_secret_expires_at
         FROM callbacks c JOIN partners p ON p.id = c.partner_id
        WHERE c.id = $1`,
      [callbackId],
    );
    // Already delivered or failed (a duplicate job), or gone: nothing to do.
    if (!row || row.status !== 'pending') return null;
    if (row.next_attempt_at && row.next_attempt_at.getTime() > Date.now() + EARLY_TOLERANCE_MS) {
      return { retryAt: row.next_attempt_at.getTime() };
    }

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
    await this.record(row, startedAt, result, decision);

    this.metrics.attempts.inc({ result: decision.action, kind: result.outcome.kind });
    this.metrics.attemptDuration.observe(result.durationMs / 1000);
    if (decision.action === 'delivered') this.metrics.endToEnd.observe((Date.now() - row.created_at.getTime()) / 1000);
    return decision.action === 'retry' ? { retryAt: Date.now() + decision.delayMs } : null;
  }

  /** The attempt row and the callback's new state, atomically (one statement). */
  private async record(row: DeliveryRow, startedAt: Date, r: SendResult, d: Decision): Promise<void> {
    const status = d.action === 'delivered' ? 'delivered' : d.action === 'fail' ? 'failed' : 'pending';
    const nextAttemptAt = d.action === 'retry' ? new Date(Date.now() + d.delayMs) : null;
    const lastError = d.action === 'delivered' ? null : describe(r, d);
    await this.db.query(
      `WITH attempt AS (
         INSERT INTO callback_attempts (callback_id, number, started_at, duration_ms, status_code, error, response_body, source_address)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       )
       UPDATE callbacks
          SET attempt_count = attempt_count + 1,
              schedule_attempts = schedule_attempts + 1,
              status = $9,
              next_attempt_at = $10,
              last_error = $11,
              delivered_at = CASE WHEN $9 = 'delivered' THEN now() ELSE delivered_at END
        WHERE id = $1 AND status = 'pending' AND schedule_attempts = $12`,
      [
        row.id,
        row.attempt_count + 1,
        startedAt,
        r.durationMs,
        r.statusCode,
        r.error,
        r.responseBody,
        r.sourceAddress,
        status,
        nextAttemptAt,
        lastError,
        row.schedule_attempts,
      ],
    );
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

/** The BullMQ worker of this process (roles `worker` and `all`). */
@Injectable()
export class DeliveryWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly log = new Logger('DeliveryWorker');
  private worker: Worker<DeliverJobData> | null = null;
  private redis: Redis | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly delivery: CallbackDelivery,
    private readonly sender: CallbackSender,
  ) {}

  onApplicationBootstrap(): void {
    this.redis = createRedis(this.config.redisUrl, `${this.config.queuePrefix}-worker`);
    this.worker = new Worker<DeliverJobData>(CALLBACK_QUEUE, (job, token) => this.process(job, token), {
      connection: this.redis,
      prefix: this.config.queuePrefix,
      concurrency: this.config.callbackConcurrency,
      // A job whose worker died mid-delivery is noticed within ~15 s (lock expiry + stalled
      // check) and goes back to wait, however often that happens: delivered after restart.
      // The lock is renewed every lockDuration/2 while a slow delivery is in flight.
      lockDuration: 10_000,
      stalledInterval: 5_000,
      maxStalledCount: Number.MAX_SAFE_INTEGER,
    });
    this.worker.on('error', (e) => this.log.warn(`worker: ${e.message}`));
  }

  /** SIGTERM: stop taking jobs and let the in-flight deliveries finish and record. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.worker?.close().catch(() => undefined);
    this.redis?.disconnect();
    this.sender.close();
  }

  private async process(job: Job<DeliverJobData>, token?: string): Promise<void> {
    const next = await this.delivery.deliver(job.data.callbackId);
    if (next) {
      // Same job, same id, later: BullMQ keeps it delayed without counting a failure.
      await job.moveToDelayed(next.retryAt, token);
      throw new DelayedError();
    }
  }
}
