import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { CALLBACKS_CHANNEL } from '../callbacks/callback-recorder.js';
import { rawPool } from '../database/database.js';

/**
 * Tells admission that there may be something to admit (a commit recorded callbacks, a delivery
 * settled, an operator redelivered). In the process that leads admission it runs a pass at once;
 * elsewhere it sends `NOTIFY funding_callbacks`, one at a time (wake-ups meanwhile go together in
 * the next). A lost wake-up costs at most the admission timer's second.
 */
@Injectable()
export class AdmissionSignal {
  private readonly pool: Pool;
  private leader: (() => void) | null = null;
  private notifying = false;
  private again = false;

  constructor(@InjectDataSource() db: DataSource) {
    this.pool = rawPool(db);
  }

  /** The admission leader of this process registers its pass here (null when it stops leading). */
  lead(pass: (() => void) | null): void {
    this.leader = pass;
  }

  wake(): void {
    if (this.leader) return this.leader();
    if (this.notifying) {
      this.again = true;
      return;
    }
    this.notifying = true;
    this.pool
      .query('SELECT pg_notify($1, $2)', [CALLBACKS_CHANNEL, ''])
      .catch(() => undefined)
      .finally(() => {
        this.notifying = false;
        if (!this.again) return;
        this.again = false;
        this.wake();
      });
  }
}
