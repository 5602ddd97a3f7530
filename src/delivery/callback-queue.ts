import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { Queue } from 'bullmq';
import { CallbackMessage } from '../callbacks/callback-message.js';
import { APP_CONFIG, AppConfig } from '../config/app-config.js';
import { createRedis, redisNamespace, RedisConnection } from '../database/redis.js';

/**
 * The queue name is part of the data in Redis: renaming it strands queued jobs, so it is frozen
 * here. Job ids are callback ids (UUIDs): BullMQ keys are `prefix:queue:id`, which is why an id
 * must never contain ':'.
 */
export const CALLBACK_QUEUE = 'callbacks';

/** Job data is the callback id only: BullMQ stores job data in clear, so no bodies or secrets. */
export interface DeliverJobData {
  callbackId: string;
}

/** An admitted callback: its id, and what names its job (message, company, destination origin). */
export interface AdmittedCallback {
  id: string;
  message: number;
  company_id: string;
  destination: string;
}

/** The job's name: which callback this is, readable in a list of thousands; never a URL's path or query. */
export function callbackJobName(c: AdmittedCallback): string {
  return `${c.message} ${CallbackMessage[c.message] ?? 'Unknown'} · company ${c.company_id} · ${c.destination}`;
}

/**
 * Redis holds only work to do now: the jobs of admitted (`sending`) callbacks, at most the ready
 * window, each removed as soon as it ends. Retry waits, dead letters and delivered callbacks live
 * in PostgreSQL (the dashboard reads them there).
 */
@Injectable()
export class CallbackQueue implements OnApplicationShutdown {
  readonly queue: Queue<DeliverJobData>;
  private readonly redis: RedisConnection;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    // failFast: while Redis is unreachable an add fails at once, and admission hands the rows back.
    this.redis = createRedis(config.redisUrl, `${config.queuePrefix}-queue`, true);
    this.queue = new Queue<DeliverJobData>(CALLBACK_QUEUE, { connection: this.redis, prefix: redisNamespace(config.queuePrefix) });
    this.queue.on('error', () => undefined);
  }

  /** One job per admitted callback, due now; an id already in the queue stays one job. */
  async add(rows: AdmittedCallback[]): Promise<void> {
    if (rows.length === 0) return;
    await this.queue.addBulk(rows.map((r) => ({ name: callbackJobName(r), data: { callbackId: r.id }, opts: { jobId: r.id, removeOnComplete: true, removeOnFail: true } })));
  }

  /**
   * Drops jobs a v1 deployment left behind (kept completed and failed jobs, delayed retries): an
   * add whose id is still there would be ignored, leaving its callback to wait for its lease.
   */
  async dropLegacyJobs(): Promise<void> {
    for (const state of ['completed', 'failed', 'delayed'] as const) {
      while ((await this.queue.clean(0, 10_000, state)).length > 0);
    }
  }

  /** Jobs waiting for a worker or running (what Redis holds of deliveries). */
  async size(): Promise<number> {
    const c = await this.queue.getJobCounts('wait', 'active', 'prioritized');
    return c.wait + c.active + c.prioritized;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.queue.close().catch(() => undefined);
    this.redis.disconnect();
  }
}
