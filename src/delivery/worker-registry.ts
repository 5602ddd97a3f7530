import { Inject, Injectable, Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { WorkerSlots } from '../callbacks/index.js';
import { AdmissionSignal, APP_CONFIG, AppConfig, RepeatLimitedLog } from '../platform/index.js';

const HEARTBEAT_MS = 2000;

/**
 * A worker process's delivery slots, announced in `delivery_workers` while it runs: admission
 * hands Redis no more callbacks than the live workers can take at once, so an admitted callback
 * never waits behind hung sockets for a slot, and with no worker alive nothing is admitted.
 */
@Injectable()
export class WorkerRegistry {
  readonly id = `${process.pid}-${randomBytes(4).toString('hex')}`;
  private readonly warnings = new RepeatLimitedLog((m) => new Logger('DeliveryWorker').warn(m));
  private timer: NodeJS.Timeout | null = null;
  private beating: Promise<void> = Promise.resolve();

  private readonly concurrency: number;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly slots: WorkerSlots,
    private readonly signal: AdmissionSignal,
  ) {
    this.concurrency = config.callbackConcurrency;
  }

  /** Announces the slots now and every HEARTBEAT_MS; the first announcement wakes admission. */
  join(): void {
    this.beating = this.beat().then(() => this.signal.wake());
    this.timer = setInterval(() => {
      this.beating = this.beat();
    }, HEARTBEAT_MS).unref();
  }

  /** Withdraws the slots (and the expired entries of others): nothing more is admitted for this worker. */
  async leave(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.beating; // a heartbeat under way must not announce the slots again after this
    await this.slots.withdraw(this.id).catch(() => undefined);
  }

  private async beat(): Promise<void> {
    await this.slots
      .announce(this.id, this.concurrency)
      .catch((e: Error) => this.warnings.warn(`cannot announce this worker's slots: ${e.message}`));
  }
}
