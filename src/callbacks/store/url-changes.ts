import { EntityManager } from 'typeorm';
import { noteDue } from '../../platform/index.js';
import { CallbackMessage } from '../callback-message.js';
import { removeUrl } from './lifecycle.js';

/**
 * The callbacks a resource's URL property receives: its company's callbacks of these messages
 * whose body names the resource (`key`: the body's id of that kind).
 */
export interface CallbacksOfUrl {
  /** The request property, for lastError. */
  property: string;
  companyId: string;
  messages: CallbackMessage[];
  key: 'companyId' | 'limitRequestId' | 'withdrawalId';
  resourceId: string;
}

/**
 * The resource's callbacks not yet delivered, or failed (test callbacks aside: they went to a URL
 * given for the test). Found through the company's callbacks or the undelivered ones, whichever is
 * fewer (docs/architecture.md, "Changing a callback URL").
 */
const OF_URL = `c.company_id = $1 AND c.message = ANY($2::smallint[]) AND c.body::json ->> $3 = $4 AND NOT c.test
                AND c.status IN ('pending', 'sending', 'failed')`;

/**
 * A new URL: the resource's pending callbacks go there from their next attempt, its failed ones
 * when redelivered (their `url` becomes it, and a removal before is undone). One being attempted
 * now (`sending`) keeps its URL, so its destination and its place in that destination's window,
 * until its attempt settles: it takes the new URL as `next_url`, which its settlement (or its
 * lease's lapse) makes its `url`. The new destination becomes known through the
 * callbacks_note_moved_destination trigger when `url` changes. Returns how many callbacks follow it.
 */
export async function moveCallbacks(m: EntityManager, of: CallbacksOfUrl, url: string): Promise<number> {
  const [, count]: [unknown, number] = await m.query(MOVE_URL, [of.companyId, of.messages, of.key, of.resourceId, url]);
  // Some may be due now at their new destination, whose window is its own.
  noteDue(m, count);
  return count;
}

/**
 * The URL removed: the resource's undelivered callbacks become `failed`, their lastError saying so,
 * and none of them (the failed ones before included) can be redelivered. One being attempted now
 * stays `sending`, counted at its destination, until its attempt settles: failed then, unless that
 * attempt delivered it (the receiver has it), its lastError saying the URL was removed.
 */
export async function failCallbacksOfRemovedUrl(m: EntityManager, of: CallbacksOfUrl): Promise<number> {
  const [, count]: [unknown, number] = await m.query(REMOVE_URL, [of.companyId, of.messages, of.key, of.resourceId, `callback URL removed by the partner (${of.property} set to null); no further attempts`]);
  return count;
}

export const MOVE_URL = `UPDATE callbacks c
        SET url = CASE WHEN c.status = 'sending' THEN c.url ELSE $5 END,
            next_url = CASE WHEN c.status = 'sending' THEN $5 END,
            url_removed_at = NULL
      WHERE ${OF_URL}`;

export const REMOVE_URL = `UPDATE callbacks c
        SET url_removed_at = now(), next_url = NULL,
            last_error = CASE WHEN c.status = 'failed' THEN c.last_error ELSE $5 END,
            ${removeUrl('            ')}
      WHERE ${OF_URL}`;

/** The URL as the PATCH set it: moved to a new one, or removed (null). */
export async function followUrl(m: EntityManager, of: CallbacksOfUrl, url: string | null): Promise<void> {
  await (url === null ? failCallbacksOfRemovedUrl(m, of) : moveCallbacks(m, of, url));
}
