import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { Queue } from 'bullmq';
import { APP_CONFIG, AppConfig } from '../config/app-config.js';
import { createRedis, redisNamespace, RedisConnection } from '../database/redis.js';
import { Batcher } from './batcher.js';
import { callbackJobName } from './delivery-journal.js';

/**
 * Appends lines to the logs of jobs that still exist, as BullMQ's own job.log() does (a missing
 * job gets no orphan log key), for many jobs in one call.
 */
const APPEND_LOGS = `
for i = 1, #ARGV, 2 do
  local job = ARGV[i]
  if redis.call('EXISTS', job) == 1 then redis.call('RPUSH', job .. ':logs', ARGV[i + 1]) end
end
return 1
`;

/**
 * The queue name is part of the data in Redis: renaming it strands queued jobs, so it is frozen
 * here. Job ids are callback ids (UUIDs): BullMQ keys are `prefix:queue:id`, which is why an id
 * must never contain ':'. Job names are for the dashboard only (callbackJobName): the worker
 * takes every job of the queue whatever its name.
 */
export const CALLBACK_QUEUE = 'callbacks';

/** Job data is the callback id only: BullMQ stores job data in clear, so no bodies or secrets. */
export interface DeliverJobData {
  callbackId: string;
  /** Admitted with a slot of its destination reserved for it (a hand-off, a probe, a destination neither healthy nor trusted: see AdmitMode). */
  slot?: true;
  /**
   * Resumed from parking without a slot: counted among its destination's resumed callbacks until
   * it starts, so it asks admission when it does (a worker's reused credit would not tell).
   */
  resumed?: true;
}

/** What a job is made of: the id, when it is due, and what names it on the dashboard. */
export interface QueuedCallback {
  id: string;
  nextAttemptAt: Date | null;
  message: number;
  companyId: string;
  /** The callback URL's origin (callbacks.destination). */
  destination: string;
  /** BullMQ priority (0: none, taken first; see Admitted.priority). */
  priority?: number;
  /** Whether admission reserved a slot for it (see DeliverJobData.slot). */
  slot?: boolean;
  /** See DeliverJobData.resumed. */
  resumed?: boolean;
}

@Injectable()
export class CallbackQueue implements OnModuleDestroy {
  readonly queue: Queue<DeliverJobData>;
  private readonly redis: RedisConnection & { appendJobLogs(key: string, ...args: string[]): Promise<number> };
  /** Job log lines of the same tick, written in one command (one per delivery would cost a round trip each). */
  private readonly logs = new Batcher<{ id: string; line: string }, void>(async (items) => {
    await this.redis.appendJobLogs(this.queue.toKey('meta'), ...items.flatMap((i) => [this.queue.toKey(i.id), i.line]));
    return items.map(() => undefined);
  });

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.redis = createRedis(config.redisUrl, `${config.queuePrefix}-queue`, true) as CallbackQueue['redis'];
    // KEYS[1] only routes the script to the deployment's slot on a cluster (every key shares it).
    this.redis.defineCommand('appendJobLogs', { numberOfKeys: 1, lua: APPEND_LOGS });
    this.queue = new Queue<DeliverJobData>(CALLBACK_QUEUE, {
      connection: this.redis,
      prefix: redisNamespace(config.queuePrefix),
      // No removeOnComplete/removeOnFail here: the worker's options keep the dashboard's window.
    });
    // Redis outages surface as failed adds (the relay retries); keep them out of the crash path.
    this.queue.on('error', () => undefined);
  }

  /** Adds one job per callback; an id already queued is left as it is (BullMQ ignores it). */
  async add(rows: QueuedCallback[]): Promise<void> {
    if (rows.length === 0) return;
    const now = Date.now();
    await this.queue.addBulk(
      rows.map((r) => ({
        name: callbackJobName(r),
        data: r.slot ? { callbackId: r.id, slot: true } : r.resumed ? { callbackId: r.id, resumed: true } : { callbackId: r.id },
        // A job holding a reserved slot goes to the front: the slot is idle until a worker takes it.
        opts: { jobId: r.id, delay: Math.max(0, (r.nextAttemptAt?.getTime() ?? now) - now), ...(r.priority ? { priority: r.priority } : {}), ...(r.slot ? { lifo: true } : {}) },
      })),
    );
  }

  /** Adds a line to a job's log (the dashboard's Logs tab). */
  log(id: string, line: string): Promise<void> {
    return this.logs.call({ id, line });
  }

  /** Whether any job waits to be taken (due, prioritised or not). */
  async anyWaiting(): Promise<boolean> {
    const counts = await this.queue.getJobCounts('wait', 'prioritized');
    return counts.wait + counts.prioritized > 0;
  }

  /**
   * Drops the finished (completed or failed) jobs of these callbacks: the dashboard keeps finished
   * jobs for a while, and BullMQ ignores an add whose id is still there. Two commands whatever
   * the count; only ids found finished cost a removal.
   */
  async removeFinished(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    const [completed, failed] = await Promise.all([this.redis.zmscore(this.queue.keys.completed, ...ids), this.redis.zmscore(this.queue.keys.failed, ...ids)]);
    await Promise.all(ids.filter((_, i) => completed[i] !== null || failed[i] !== null).map((id) => this.remove(id)));
  }

  /** Drops a waiting, delayed or finished job (not an active one) so a redelivery starts afresh. */
  async remove(id: string): Promise<void> {
    await this.queue.remove(id).catch(() => 0);
  }

  async onModuleDestroy(): Promise<void> {
    await this.queue.close().catch(() => undefined);
    this.redis.disconnect();
  }
}
