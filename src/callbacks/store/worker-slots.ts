import { Injectable } from '@nestjs/common';
import { SqlPool } from '../../platform/index.js';

/** A worker that has not been heard of for this long is gone: admission stops counting its slots. */
const EXPIRES_AFTER = '6 seconds';

export const ANNOUNCE_SLOTS = `INSERT INTO delivery_workers (id, concurrency, expires_at)
      VALUES ($1, $2, now() + interval '${EXPIRES_AFTER}')
      ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at`;

export const WITHDRAW_SLOTS = `DELETE FROM delivery_workers WHERE id = $1 OR expires_at < now() - interval '1 hour'`;

/**
 * The workers' delivery slots in `delivery_workers` (delivery/worker-registry.ts announces them;
 * admission counts the live ones), on SqlPool's connections.
 */
@Injectable()
export class WorkerSlots {
  constructor(private readonly sql: SqlPool) {}

  /** This worker's slots, alive for EXPIRES_AFTER more. */
  async announce(id: string, concurrency: number): Promise<void> {
    await this.sql.pool.query(ANNOUNCE_SLOTS, [id, concurrency]);
  }

  /** This worker's slots gone, with the entries expired an hour ago. */
  async withdraw(id: string): Promise<void> {
    await this.sql.pool.query(WITHDRAW_SLOTS, [id]);
  }
}
