import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
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
  /** Records the callbacks of one change; returns how many were written (events without a URL are skipped). */
  async record(m: EntityManager, events: CallbackEvent[]): Promise<number> {
    const due = events.filter((e) => e.url !== null);
    if (due.length === 0) return 0;
    // One statement, one round-trip: the rows go in in the order of the events (seq follows
    // `ord`), and the NOTIFY that wakes the relay is queued for the commit.
    await m.query(
      `WITH ins AS (
         INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
         SELECT partner_id, company_id, message, url, body, 'pending', now()
           FROM unnest($1::uuid[], $2::uuid[], $3::smallint[], $4::text[], $5::text[]) WITH ORDINALITY
                AS e(partner_id, company_id, message, url, body, ord)
          ORDER BY ord
         RETURNING 1
       )
       SELECT pg_notify($6, ''), (SELECT count(*) FROM ins) AS n`,
      [
        due.map((e) => e.partnerId),
        due.map((e) => e.ids.companyId),
        due.map((e) => e.message),
        due.map((e) => e.url),
        due.map((e) => buildCallbackBody(e.message, e.ids)),
        CALLBACKS_CHANNEL,
      ],
    );
    return due.length;
  }
}
