import { EntityManager } from 'typeorm';
import { CallbackMessage } from '../callbacks/callback-message.js';

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
 * now finishes against the URL its worker loaded. The new destination becomes known through the
 * callbacks_note_moved_destination trigger. Returns how many callbacks follow it.
 */
export async function moveCallbacks(m: EntityManager, of: CallbacksOfUrl, url: string): Promise<number> {
  const [, count]: [unknown, number] = await m.query(`UPDATE callbacks c SET url = $5, url_removed_at = NULL WHERE ${OF_URL}`, [
    of.companyId,
    of.messages,
    of.key,
    of.resourceId,
    url,
  ]);
  return count;
}

/**
 * The URL removed: the resource's undelivered callbacks become `failed`, their lastError saying so,
 * and none of them (the failed ones before included) can be redelivered. One being attempted now
 * stays failed unless that attempt delivers it (settlement records only a delivery on it).
 */
export async function failCallbacksOfRemovedUrl(m: EntityManager, of: CallbacksOfUrl): Promise<number> {
  const [, count]: [unknown, number] = await m.query(
    `UPDATE callbacks c
        SET url_removed_at = now(),
            last_error = CASE WHEN c.status = 'failed' THEN c.last_error ELSE $5 END,
            status = 'failed', next_attempt_at = NULL, lease_until = NULL
      WHERE ${OF_URL}`,
    [of.companyId, of.messages, of.key, of.resourceId, `callback URL removed by the partner (${of.property} set to null); not sent`],
  );
  return count;
}

/** The URL as the PATCH set it: moved to a new one, or removed (null). Returns how many callbacks moved to a new URL. */
export function followUrl(m: EntityManager, of: CallbacksOfUrl, url: string | null): Promise<number> {
  return url === null ? failCallbacksOfRemovedUrl(m, of).then(() => 0) : moveCallbacks(m, of, url);
}
