import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { failedInWindow, ReplayWindow } from '../callbacks/store/portal-replay.js';
import { restartSchedules } from '../callbacks/store/repairs.js';
import { Writes } from '../database/writes.js';
import { DomainError } from '../http/domain-error.js';
import { ErrorCode } from '../http/error-codes.js';

/** The most callbacks one replay sends again (the partner API's bulk redelivery's bound). */
export const REPLAY_MAX = 100_000;

/**
 * STAND-IN, to be replaced by the partner bulk redelivery's service (`POST /v1/callbacks/redeliver`)
 * once it exists: the Replay page's count and its confirmation. Each callback is restarted by the
 * store's one redelivery statement (same id, so the same webhook-id; a fresh schedule).
 */
@Injectable()
export class PortalReplay {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly writes: Writes,
  ) {}

  /** How many failed callbacks the window holds (up to one more than {@link REPLAY_MAX}). */
  async count(partnerId: string, w: Omit<ReplayWindow, 'partnerId'>): Promise<number> {
    return (await failedInWindow(this.db, { partnerId, ...w }, REPLAY_MAX + 1)).length;
  }

  /** Sends every failed callback of the window again; how many. More than {@link REPLAY_MAX}: refused, nothing done. */
  async replay(partnerId: string, w: Omit<ReplayWindow, 'partnerId'>): Promise<number> {
    return this.writes.transaction(async (m) => {
      const ids = await failedInWindow(this.db, { partnerId, ...w }, REPLAY_MAX + 1);
      if (ids.length > REPLAY_MAX) throw new DomainError('invalid', ErrorCode.invalid_request, `more than ${REPLAY_MAX} failed callbacks in that window: replay a shorter one`);
      return ids.length === 0 ? 0 : (await restartSchedules(m, ids)).length;
    });
  }
}
