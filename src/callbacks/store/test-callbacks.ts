import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { noteDue } from '../../platform/index.js';
import { Callback } from '../callback.entity.js';
import { recordOrFail } from './lifecycle.js';
import { compactBody, isoText } from './operational-events.js';

/** The partner's test callbacks queue here: the count and the insert after it are one step. */
export const LOCK_TESTS = `SELECT pg_advisory_xact_lock($1, hashtext($2))`;

export const RECENT_TESTS = `SELECT count(*)::int AS n,
              ceil(extract(epoch FROM min(created_at) + interval '1 minute' - clock_timestamp()))::int AS free_in_s
       FROM callbacks WHERE partner_id = $1 AND test AND created_at > clock_timestamp() - interval '1 minute'`;

export interface TestCallbackRow {
  partnerId: string;
  companyId: string;
  message: number;
  url: string;
  body: string;
}

export const OPEN_CIRCUIT_OF = `SELECT origin, (extract(epoch FROM opened_at) * 1000)::float8 AS "openedAt",
              last_error AS "lastError"
       FROM destinations WHERE key = $1::uuid::text || ' ' || callback_origin($2) AND opened_at IS NOT NULL`;

const RECORDED = recordOrFail('$6::text');
export const INSERT_TEST_CALLBACK = `INSERT INTO callbacks (partner_id, company_id, message, url, body,
                                    ${RECORDED.columns}, last_error, test, attempt_limit)
     VALUES ($1, $2, $3, $4, $5, ${RECORDED.values}, $6, true, 1)
     RETURNING id`;

/** The type of a test event. */
export const TEST_EVENT = 'operations.test';

const EVENT_RECORDED = recordOrFail('$3::text');
export const INSERT_TEST_EVENT = `
  WITH src AS MATERIALIZED (SELECT gen_random_uuid() AS id, now() AS at),
  event AS (
    INSERT INTO operational_events (id, partner_id, type, created_at, data, sent)
    SELECT id, $1::uuid, $4::text, at, '{}'::jsonb, true FROM src
  )
  INSERT INTO callbacks (id, partner_id, url, body, event_type,
                         ${EVENT_RECORDED.columns}, last_error, test, attempt_limit)
  SELECT id, $1::uuid, $2::text, ${compactBody('$4::text', isoText('at'), `'{}'::json`)}, $4::text,
         ${EVENT_RECORDED.values}, $3::text, true, 1
    FROM src
  RETURNING id`;

/** Test callbacks and test events, in the sending transaction. */
@Injectable()
export class TestCallbackRepository {
  /**
   * How many test callbacks the partner had accepted in the last minute, and in how many seconds
   * the oldest of them leaves it (callbacks_test_recent_idx). Inside the transaction that records
   * one, under the partner's advisory lock, so two cannot both see room for one.
   */
  async recentTests(
    m: EntityManager,
    partnerId: string,
    lockKey: number,
  ): Promise<{ n: number; free_in_s: number | null }> {
    await m.query(LOCK_TESTS, [lockKey, partnerId]);
    const [recent]: { n: number; free_in_s: number | null }[] = await m.query(RECENT_TESTS, [partnerId]);
    return recent;
  }

  /**
   * The open circuit of the partner's destination for a URL, if it has one (its origin, since when, its last
   * error).
   */
  async openCircuitOf(
    m: EntityManager,
    partnerId: string,
    url: string,
  ): Promise<{ origin: string; openedAt: number; lastError: string | null } | undefined> {
    const [row]: { origin: string; openedAt: number; lastError: string | null }[] = await m.query(OPEN_CIRCUIT_OF, [
      partnerId,
      url,
    ]);
    return row;
  }

  /**
   * A test callback: an ordinary row whose schedule allows one attempt and that no feed lists. Due
   * now, or (`notSent`: why, its destination's circuit being open) `failed` at once and unsent.
   */
  async insertTestCallback(m: EntityManager, t: TestCallbackRow, notSent: string | null): Promise<Callback> {
    const [row]: { id: string }[] = await m.query(INSERT_TEST_CALLBACK, [
      t.partnerId,
      t.companyId,
      t.message,
      t.url,
      t.body,
      notSent,
    ]);
    if (notSent === null) noteDue(m, 1);
    return this.callback(m, row.id);
  }

  /** The test callback just inserted, as TypeORM reads it. */
  async callback(m: EntityManager, id: string): Promise<Callback> {
    return m.findOneByOrFail(Callback, { id });
  }

  /**
   * A test event (`operations.test`, empty data): an operational event of the partner's, recorded
   * in operational_events and delivered to `$2` (its operationsUrl) as the others are (the same body,
   * `{"type","timestamp","data"}`, signed and sent like any callback), with one attempt allowed and
   * marked `test`, so it counts among the partner's test callbacks of the minute (recentTests). Due
   * now, or (`$3`: why, its destination's circuit being open) `failed` at once and unsent.
   */
  async insertTestEvent(m: EntityManager, partnerId: string, url: string, notSent: string | null): Promise<string> {
    const [row]: { id: string }[] = await m.query(INSERT_TEST_EVENT, [partnerId, url, notSent, TEST_EVENT]);
    if (notSent === null) noteDue(m, 1);
    return row.id;
  }
}
