import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { Queue } from 'bullmq';
import { APP_CONFIG, AppConfig, createRedis, FAIL_FAST, RedisConnection, redisNamespace } from '../platform/index.js';

/** Part of the data in Redis: renaming it strands queued jobs. */
export const CALLBACK_QUEUE = 'callbacks';

/**
 * Most callbacks one job carries. A job costs Redis three scripts (add, take, finish) whatever it
 * carries: the callbacks of one admission pass go together.
 */
export const JOB_CALLBACKS = 20;

/**
 * An admission pass's callbacks in jobs: at most JOB_CALLBACKS each, and at least one job per
 * live worker process while there are callbacks enough, so that a pass spreads over the workers
 * instead of queueing in one of them behind its busy slots.
 */
export function jobsOf(callbackIds: string[], workers: number): string[][] {
  const size = Math.max(1, Math.min(JOB_CALLBACKS, Math.ceil(callbackIds.length / Math.max(1, workers))));
  const jobs: string[][] = [];
  for (let i = 0; i < callbackIds.length; i += size) jobs.push(callbackIds.slice(i, i + size));
  return jobs;
}

/**
 * A job: callbacks admitted together and their lease. BullMQ stores job data in clear, so ids
 * only, no bodies or secrets. The lease (`lease_until` in microseconds, as text) is what makes
 * the job theirs: a callback whose lease lapsed and that was admitted again since belongs to its
 * new job, and this one leaves it alone.
 */
export interface DeliverJobData {
  callbackIds: string[];
  lease: string;
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
    // FAIL_FAST: while Redis is unreachable an add fails at once, and admission hands the rows back.
    this.redis = createRedis(config.redisUrl, `${config.queuePrefix}-queue`, FAIL_FAST);
    this.queue = new Queue<DeliverJobData>(CALLBACK_QUEUE, {
      connection: this.redis,
      prefix: redisNamespace(config.queuePrefix),
    });
    this.queue.on('error', () => undefined);
  }

  /** The callbacks of one admission pass (jobsOf), due now. */
  async add(callbackIds: string[], lease: string, workers: number): Promise<void> {
    const jobs = jobsOf(callbackIds, workers).map((ids) => ({
      name: `deliver ${ids.length}`,
      data: { callbackIds: ids, lease },
      opts: { removeOnComplete: true, removeOnFail: true },
    }));
    if (jobs.length > 0) await this.queue.addBulk(jobs);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.queue.close().catch(() => undefined);
    this.redis.disconnect();
  }
}
