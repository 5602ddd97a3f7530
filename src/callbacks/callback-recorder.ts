import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { buildCallbackBody, CallbackIds, CallbackMessage } from './callback-message.js';

/**
 * `NOTIFY funding_callbacks` wakes every relay: for rows written outside the domain's own
 * transactions (an operator's redelivery, a bulk load). The domain's transactions do not send it:
 * PostgreSQL serialises the commits of all transactions that NOTIFY (a cluster-wide lock held
 * through the WAL flush), which capped the API's changes per second at one commit flush each.
 * They wake their own process's relay after commit instead (`RECORDED` below).
 */
export const CALLBACKS_CHANNEL = 'funding_callbacks';

/** Set on a transaction's QueryRunner `data` when it recorded callbacks; the relay wakes after its commit. */
export const RECORDED = 'callbacksRecorded';

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
  /** Records the callbacks of one change; returns how many were written (events without a URL are skipped). */
  async record(m: EntityManager, events: CallbackEvent[]): Promise<number> {
    const due = events.filter((e) => e.url !== null);
    if (due.length === 0) return 0;
    if (!m.queryRunner?.isTransactionActive) throw new Error('callbacks are recorded inside the transaction of their change');
    const insert = callbackRows(due);
    await m.query(insert.text, insert.values);
    m.queryRunner.data[RECORDED] = true;
    return due.length;
  }
}

/**
 * The INSERT of events' callbacks, one statement, its parameters numbered from `first` and its
 * rows written only `when` that condition holds (both for a place in a larger statement). The rows
 * go in in the order of the events (seq follows `ord`).
 */
export function callbackRows(events: CallbackEvent[], first = 1, when = 'true'): { text: string; values: unknown[] } {
  const [partners, companies, messages, urls, bodies] = [0, 1, 2, 3, 4].map((i) => `$${first + i}`);
  return {
    text: `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
       SELECT partner_id, company_id, message, url, body, 'pending', now()
         FROM unnest(${partners}::uuid[], ${companies}::uuid[], ${messages}::smallint[], ${urls}::text[], ${bodies}::text[]) WITH ORDINALITY
              AS e(partner_id, company_id, message, url, body, ord)
        WHERE ${when}
        ORDER BY ord`,
    values: [
      events.map((e) => e.partnerId),
      events.map((e) => e.ids.companyId),
      events.map((e) => e.message),
      events.map((e) => e.url),
      events.map((e) => buildCallbackBody(e.message, e.ids)),
    ],
  };
}
