import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Callback } from './callback.entity.js';
import { buildCallbackBody, CallbackIds, CallbackMessage } from './callback-message.js';

/** Postgres delivers a NOTIFY only when the transaction that sent it commits: a free after-commit hook. */
export const CALLBACKS_CHANNEL = 'funding_callbacks';

export interface CallbackEvent {
  message: CallbackMessage;
  /** The URL registered on the resource at the moment of the change; null = none registered. */
  url: string | null;
  partnerId: string;
  ids: CallbackIds;
}

/**
 * The domain's only door into callbacks: called inside the domain transaction, so a change and
 * its callbacks commit together or not at all.
 */
@Injectable()
export class CallbackRecorder {
  async record(m: EntityManager, events: CallbackEvent[]): Promise<Callback[]> {
    const rows = events
      .filter((e) => e.url !== null)
      .map((e) =>
        m.create(Callback, {
          partnerId: e.partnerId,
          companyId: e.ids.companyId,
          message: e.message,
          url: e.url!,
          body: buildCallbackBody(e.message, e.ids),
          status: 'pending',
          attemptCount: 0,
          scheduleAttempts: 0,
          nextAttemptAt: new Date(),
          enqueuedAt: null,
          lastError: null,
          deliveredAt: null,
        }),
      );
    if (rows.length === 0) return [];
    // One INSERT keeps the table order (seq) equal to the order of the events.
    await m.insert(Callback, rows);
    await m.query(`SELECT pg_notify($1, '')`, [CALLBACKS_CHANNEL]);
    return rows;
  }
}
