import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { Job, Worker } from 'bullmq';
import {
  APP_CONFIG,
  AppConfig,
  createRedis,
  RedisConnection,
  redisNamespace,
  RepeatLimitedLog,
} from '../platform/index.js';
import { CallbackDelivery } from './callback-delivery.js';
import { CALLBACK_QUEUE, DeliverJobData } from './callback-queue.js';
import { CallbackSender } from '../egress/index.js';
import { DeliverySlots } from './delivery-slots.js';
import { WorkerRegistry } from './worker-registry.js';

/** Jobs per BullMQ Worker: several small Workers, not one big one (docs/architecture.md, "Workers"). */
const CONCURRENCY_PER_WORKER = 32;

/**
 * At shutdown, once every delivery has settled, BullMQ's Redis bookkeeping gets this long: with
 * Redis unreachable Worker.close() never returns, and the process stops without it (docs/operations.md).
 */
const SHUTDOWN_REDIS_GRACE_MS = 3000;

/**
 * The BullMQ workers of this process (roles `worker` and `all`): CALLBACK_CONCURRENCY deliveries
 * in slots in all, and as many as their waiting places hold waiting on answers (delivery-slots.ts).
 * Shutdown, in this order: withdraw the slots from admission, stop taking jobs, let the deliveries
 * in flight settle (beforeApplicationShutdown, while PostgreSQL and Redis are still open), then
 * close the connections (onApplicationShutdown).
 */
@Injectable()
export class DeliveryWorker implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly log = new Logger('DeliveryWorker');
  private readonly errors = new RepeatLimitedLog((m) => this.log.warn(m));
  private readonly slots: DeliverySlots;
  private workers: Worker<DeliverJobData>[] = [];
  private redis: RedisConnection | null = null;
  private inFlight = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly delivery: CallbackDelivery,
    private readonly sender: CallbackSender,
    private readonly registry: WorkerRegistry,
  ) {
    this.slots = new DeliverySlots(config.callbackConcurrency);
  }

  onApplicationBootstrap(): void {
    this.redis = createRedis(this.config.redisUrl, `${this.config.queuePrefix}-worker`);
    const total = this.config.callbackConcurrency;
    const count = Math.ceil(total / CONCURRENCY_PER_WORKER);
    for (let i = 0; i < count; i++) {
      // Spread the total evenly: 200 → 7 workers of 28 or 29.
      const concurrency = Math.floor(total / count) + (i < total % count ? 1 : 0);
      const worker = new Worker<DeliverJobData>(CALLBACK_QUEUE, (job) => this.process(job), {
        connection: this.redis,
        prefix: redisNamespace(this.config.queuePrefix),
        concurrency,
        // A job whose worker died mid-delivery goes back to wait within ~15 s (lock expiry +
        // stalled check), however often that happens, and is delivered by another worker.
        lockDuration: 10_000,
        stalledInterval: 5_000,
        maxStalledCount: Number.MAX_SAFE_INTEGER,
        removeOnComplete: { count: 0 },
        removeOnFail: { count: 0 },
      });
      worker.on('error', (e) => this.errors.warn(`worker: ${e.message}`));
      this.workers.push(worker);
    }
    this.registry.join();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.registry.leave();
    // The jobs end when their callbacks settle or wait in waiting places: the latter settle after.
    const closed = Promise.all(this.workers.map((w) => w.close().catch(() => undefined)))
      .then(() => this.idle())
      .then(() => true);
    const grace = () => new Promise<false>((r) => setTimeout(() => r(false), SHUTDOWN_REDIS_GRACE_MS).unref());
    for (;;) {
      if (await Promise.race([closed, this.idle().then(() => false)])) return;
      if (await Promise.race([closed, grace()])) return;
      if (this.inFlight === 0) break;
    }
    this.log.warn(
      'Redis does not answer: stopping without finishing the queue bookkeeping (every delivery outcome is recorded)',
    );
  }

  onApplicationShutdown(): void {
    this.redis?.disconnect();
    this.sender.close();
  }

  /** Resolves when no delivery of this process is in progress. */
  private idle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * A job's callbacks, each in a slot of this process; the job ends when each has settled or waits
   * on its answer in a waiting place (delivery-slots.ts), which its lease covers as the job did. A
   * job of an earlier version (no lease) is dropped: its callbacks come back when their leases lapse.
   */
  private async process(job: Job<DeliverJobData>): Promise<void> {
    const { callbackIds, lease } = job.data;
    if (!Array.isArray(callbackIds) || typeof lease !== 'string') return;
    const runs = callbackIds.map((id) => this.slots.run(() => this.delivery.deliver(id, lease)));
    for (const run of runs) this.follow(run.done);
    await Promise.all(runs.map((run) => run.released));
  }

  /** Counts a delivery in flight until it settles; one that throws stays `sending` until its lease lapses. */
  private follow(done: Promise<unknown>): void {
    this.inFlight++;
    void done
      .catch((e: unknown) => this.errors.warn(`delivery: ${(e as Error).message}`))
      .finally(() => {
        if (--this.inFlight === 0) this.idleWaiters.splice(0).forEach((resolve) => resolve());
      });
  }
}
