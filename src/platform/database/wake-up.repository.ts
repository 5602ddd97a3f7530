import { Injectable } from '@nestjs/common';
import { SqlPool } from './sql-pool.js';

/** The channel of admission's wake-ups (admission-signal.ts): each relay LISTENs on it. */
export const CALLBACKS_CHANNEL = 'funding_callbacks';

/** The wake-up's statement (admission-signal.ts), on a connection of the SqlPool. */
@Injectable()
export class WakeUpRepository {
  constructor(private readonly sql: SqlPool) {}

  /** `NOTIFY funding_callbacks`, outside any transaction of the caller's. */
  async notify(): Promise<void> {
    await this.sql.pool.query('SELECT pg_notify($1, $2)', [CALLBACKS_CHANNEL, '']);
  }
}
