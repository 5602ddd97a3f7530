import { Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import { RepeatLimitedLog } from '../platform/index.js';

const HEARTBEAT_MS = 2000;
/** A worker that has not been heard of for this long is gone: admission stops counting its slots. */
const EXPIRES_AFTER = '6 seconds';

/**
 * A worker process's delivery slots, announced in `delivery_workers` while it runs: admission
 * hands Redis no more callbacks than the live workers can take at once, so an admitted callback
 * never waits behind hung sockets for a slot, and with no worker alive nothing is admitted.
 */
export class WorkerRegistry {
  readonly id = `${process.pid}-${randomBytes(4).toString('hex')}`;
  private readonly warnings = new RepeatLimitedLog((m) => new Logger('DeliveryWorker').warn(m));
  private timer: NodeJS.Timeout | null = null;
  private beating: Promise<void> = Promise.resolve();

  constructor(
    private readonly pool: Pool,
    private readonly concurrency: number,
    private readonly joined: () => void,
  ) {}

  /** Announces the slots now and every HEARTBEAT_MS; the first announcement wakes admission. */
  join(): void {
    this.beating = this.beat().then(this.joined);
    this.timer = setInterval(() => {
      this.beating = this.beat();
    }, HEARTBEAT_MS).unref();
  }

  /** Withdraws the slots (and the expired entries of others): nothing more is admitted for this worker. */
  async leave(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.beating; // a heartbeat under way must not announce the slots again after this
    await this.pool.query(`DELETE FROM delivery_workers WHERE id = $1 OR expires_at < now() - interval '1 hour'`, [this.id]).catch(() => undefined);
  }

  private async beat(): Promise<void> {
    const upsert = `INSERT INTO delivery_workers (id, concurrency, expires_at) VALUES ($1, $2, now() + interval '${EXPIRES_AFTER}')
      ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at`;
    await this.pool.query(upsert, [this.id, this.concurrency]).catch((e: Error) => this.warnings.warn(`cannot announce this worker's slots: ${e.message}`));
  }
}
