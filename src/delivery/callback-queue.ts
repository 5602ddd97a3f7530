import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { Queue } from 'bullmq';
import { APP_CONFIG, AppConfig } from '../config/app-config.js';
import { createRedis, redisNamespace, RedisConnection } from '../database/redis.js';

/**
 * Queue and job names are part of the data in Redis: renaming them strands queued jobs, so
 * they are frozen here. Job ids are callback ids (UUIDs): BullMQ keys are `prefix:queue:id`,
 * which is why an id must never contain ':'.
 */
export const CALLBACK_QUEUE = 'callbacks';
export const DELIVER_JOB = 'deliver';

/** Job data is the callback id only: BullMQ stores job data in clear, so no bodies or secrets. */
export interface DeliverJobData {
  callbackId: string;
}

@Injectable()
export class CallbackQueue implements OnModuleDestroy {
  readonly queue: Queue<DeliverJobData>;
  private readonly redis: RedisConnection;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.redis = createRedis(config.redisUrl, `${config.queuePrefix}-queue`, true);
    this.queue = new Queue<DeliverJobData>(CALLBACK_QUEUE, {
      connection: this.redis,
      prefix: redisNamespace(config.queuePrefix),
      defaultJobOptions: { removeOnComplete: true, removeOnFail: true },
    });
    // Redis outages surface as failed adds (the relay retries); keep them out of the crash path.
    this.queue.on('error', () => undefined);
  }

  /** Adds one job per callback; an id already queued is left as it is (BullMQ ignores it). */
  async add(rows: { id: string; nextAttemptAt: Date | null }[]): Promise<void> {
    if (rows.length === 0) return;
    const now = Date.now();
    await this.queue.addBulk(
      rows.map((r) => ({
        name: DELIVER_JOB,
        data: { callbackId: r.id },
        opts: { jobId: r.id, delay: Math.max(0, (r.nextAttemptAt?.getTime() ?? now) - now) },
      })),
    );
  }

  /** Drops a waiting or delayed job (not an active one) so a redelivery starts afresh. */
  async remove(id: string): Promise<void> {
    await this.queue.remove(id).catch(() => 0);
  }

  async onModuleDestroy(): Promise<void> {
    await this.queue.close().catch(() => undefined);
    this.redis.disconnect();
  }
}
