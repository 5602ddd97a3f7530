import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { noteDue } from '../../platform/index.js';
import { CallbackMessage } from '../callback-message.js';
import { removeUrl } from './lifecycle.js';

/** One resource whose URL property changes: its company, and its id (the body's id of the kind `key` names). */
export interface ResourceRef {
  companyId: string;
  id: string;
}

/**
 * The callbacks a URL property receives, of one resource (a PATCH) or of many (a move of a URL):
 * each resource's company's callbacks of these messages whose body names the resource.
 */
export interface CallbacksOfUrl {
  /** The request property, for lastError. */
  property: string;
  messages: CallbackMessage[];
  key: 'companyId' | 'limitRequestId' | 'withdrawalId';
  resources: ResourceRef[];
}

/** The resources, joined row by row ($1 companies, $2 the resources' ids as the body holds them). */
const RESOURCES = `unnest($1::uuid[], $2::text[]) AS r(company_id, resource_id)`;

/**
 * Each resource's callbacks not yet delivered, or failed (test callbacks aside: they went to a URL
 * given for the test), read through its company's callbacks (`callbacks_company_seq_idx`): one
 * index range per resource, however many resources a move changes (docs/architecture.md,
 * "Changing a callback URL").
 */
const OF_URL = `c.company_id = r.company_id AND c.message = ANY($3::smallint[]) AND c.body::json ->> $4 = r.resource_id
                AND NOT c.test AND c.status IN ('pending', 'sending', 'failed')`;

/** The parameters of OF_URL's statements, the URL or error after them ($5). */
function ofUrl(of: CallbacksOfUrl, fifth: string): unknown[] {
  return [of.resources.map((r) => r.companyId), of.resources.map((r) => r.id), of.messages, of.key, fifth];
}

export const MOVE_URL = `UPDATE callbacks c
        SET url = CASE WHEN c.status = 'sending' THEN c.url ELSE $5 END,
            next_url = CASE WHEN c.status = 'sending' THEN $5 END,
            url_removed_at = NULL
       FROM ${RESOURCES}
      WHERE ${OF_URL}`;

export const REMOVE_URL = `UPDATE callbacks c
        SET url_removed_at = now(), next_url = NULL,
            last_error = CASE WHEN c.status = 'failed' THEN c.last_error ELSE $5 END,
            ${removeUrl('            ')}
       FROM ${RESOURCES}
      WHERE ${OF_URL}`;

/** A resource's callback URL moved or removed: its callbacks follow, in the change's transaction. */
@Injectable()
export class CallbackUrlFollowing {
  /**
   * A new URL: the resource's pending callbacks go there from their next attempt, its failed ones
   * when redelivered (their `url` becomes it, and a removal before is undone). One being attempted
   * now (`sending`) keeps its URL, so its destination and its place in that destination's window,
   * until its attempt settles: it takes the new URL as `next_url`, which its settlement (or its
   * lease's lapse) makes its `url`. The new destination becomes known through the
   * callbacks_note_moved_destination trigger when `url` changes. Returns how many callbacks follow it.
   * A resource listed twice moves its callbacks once (an UPDATE changes a row once).
   */
  async moveCallbacks(m: EntityManager, of: CallbacksOfUrl, url: string): Promise<number> {
    const [, count]: [unknown, number] = await m.query(MOVE_URL, ofUrl(of, url));
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
  async failCallbacksOfRemovedUrl(m: EntityManager, of: CallbacksOfUrl): Promise<number> {
    const error = `callback URL removed by the partner (${of.property} set to null); no further attempts`;
    const [, count]: [unknown, number] = await m.query(REMOVE_URL, ofUrl(of, error));
    return count;
  }

  /** The URL as the PATCH (or a move of the URL) set it: moved to a new one, or removed (null). */
  async followUrl(m: EntityManager, of: CallbacksOfUrl, url: string | null): Promise<void> {
    await (url === null ? this.failCallbacksOfRemovedUrl(m, of) : this.moveCallbacks(m, of, url));
  }
}
