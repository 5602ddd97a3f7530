import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { FAILED_NOTICE_WINDOW } from '../operational-events/operational-event.js';
import { EVENT_WRITES, RECORD, set } from './lifecycle.js';

/** PostgreSQL's timestamps as the API writes them: ISO-8601 UTC with milliseconds. */
export const isoText = (t: string) => `to_char(${t} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * CTEs (named `<name>_…`) that record one operational event per row of `source` — its columns
 * `partner_id uuid, type text, data json` — in operational_events, and, for a partner with an
 * operationsUrl, its delivery: a callbacks row of the same id whose body is the event,
 * `{"type","timestamp","data"}`, signed and sent like any callback. Placed in the statement that
 * makes the change the event reports, they commit with it or not at all.
 */
export function emitEvents(name: string, source: string): string {
  return `
  ${name}_src AS MATERIALIZED (
    SELECT gen_random_uuid() AS id, s.partner_id, s.type, s.data, now() AS at, p.operations_url
      FROM (${source}) s JOIN partners p ON p.id = s.partner_id
  ), ${name}_events AS (
    INSERT INTO operational_events (id, partner_id, type, created_at, data, sent)
    SELECT id, partner_id, type, at, data::jsonb, operations_url IS NOT NULL FROM ${name}_src
  ), ${name}_deliveries AS (
    INSERT INTO callbacks (id, partner_id, url, body, event_type, ${RECORD.columns})
    SELECT id, partner_id, operations_url, ${compactBody('type', isoText('at'), 'data')}, type, ${RECORD.values}
      FROM ${name}_src WHERE operations_url IS NOT NULL
  )`;
}

/**
 * An event's body byte for byte as JSON.stringify writes it — compact, keys type, timestamp, data,
 * and data's keys in the order its json_build_object gave them (json, unlike jsonb, keeps it) —
 * since json's own text has spaces (`{"type" : …}`). to_json(text) escapes as JSON.stringify does;
 * data's values are scalars, whose json text is already compact.
 */
export function compactBody(type: string, timestamp: string, data: string): string {
  const dataText = `(SELECT coalesce('{' ||
                                     string_agg(to_json(d.k)::text || ':' || d.v::text, ',' ORDER BY d.n) || '}', '{}')
                       FROM json_each(${data}) WITH ORDINALITY AS d(k, v, n))`;
  return `'{"type":' || to_json(${type})::text || ',"timestamp":' || to_json(${timestamp})::text
    || ',"data":' || ${dataText} || '}'`;
}

/**
 * The rows of failed callbacks (`failed`: partner_id, destination (its key), n) folded into each
 * destination's `callbacks.failed` window (failure_notices): the first failure of a window is
 * told at once, with what was still waiting from the window before; the rest wait for the next
 * (flushNotices). The row lock of the upsert serialises processes, so at most one event per
 * destination (one partner's origin) per window. Returns the events to emit (`<name>_emit`).
 */
export function noteFailures(name: string, failed: string): string {
  const over = `f.window_ends_at <= now()`;
  return `
  ${name}_notice AS (
    INSERT INTO failure_notices AS f (partner_id, destination, window_ends_at, pending_count,
                                      emitted_at, emitted_count, emitted_from, emitted_to)
    SELECT partner_id, destination, now() + ${FAILED_NOTICE_WINDOW}, 0, now(), n, now(), now() FROM (${failed}) x
    ON CONFLICT (partner_id, destination) DO UPDATE SET
      emitted_at = CASE WHEN ${over} THEN now() ELSE f.emitted_at END,
      emitted_count = CASE WHEN ${over} THEN f.pending_count + EXCLUDED.emitted_count ELSE f.emitted_count END,
      emitted_from = CASE WHEN ${over} THEN coalesce(f.pending_from, now()) ELSE f.emitted_from END,
      emitted_to = CASE WHEN ${over} THEN now() ELSE f.emitted_to END,
      pending_count = CASE WHEN ${over} THEN 0 ELSE f.pending_count + EXCLUDED.emitted_count END,
      pending_from = CASE WHEN ${over} THEN NULL ELSE coalesce(f.pending_from, now()) END,
      pending_to = CASE WHEN ${over} THEN NULL ELSE now() END,
      window_ends_at = CASE WHEN ${over} THEN now() + ${FAILED_NOTICE_WINDOW} ELSE f.window_ends_at END
    RETURNING f.partner_id, f.destination, f.emitted_at = now() AS emit, f.emitted_count, f.emitted_from, f.emitted_to
  ), ${name}_emit AS (${failedEvents(`SELECT * FROM ${name}_notice WHERE emit`)})`;
}

/**
 * A destination's origin, from its key (SQL of callback-destination.ts, originOfKey): what an
 * event names, never the key.
 */
export const originOfKeySql = (key: string): string => `substr(${key}, strpos(${key}, ' ') + 1)`;

/**
 * `callbacks.failed` events, from rows of (partner_id, destination (its key), emitted_count, emitted_from,
 * emitted_to).
 */
function failedEvents(rows: string): string {
  return `SELECT partner_id, 'callbacks.failed' AS type,
                 json_build_object('destination', ${originOfKeySql('destination')}, 'count', emitted_count,
                                   'from', ${isoText('emitted_from')}, 'to', ${isoText('emitted_to')}) AS data
            FROM (${rows}) r`;
}

/**
 * The failures a window held back, told once the window is over: one `callbacks.failed` per
 * destination and partner, which starts its next window; windows idle for an hour are forgotten.
 * Run by admission's sweep.
 */
export const FLUSH_NOTICES = `
  WITH flushed AS (
    UPDATE failure_notices f SET emitted_at = now(), emitted_count = pending_count, emitted_from = pending_from,
           emitted_to = pending_to,
           pending_count = 0, pending_from = NULL, pending_to = NULL, window_ends_at = now() + ${FAILED_NOTICE_WINDOW}
     WHERE f.window_ends_at <= now() AND f.pending_count > 0
    RETURNING f.partner_id, f.destination, f.emitted_count, f.emitted_from, f.emitted_to
  ), idle AS (
    DELETE FROM failure_notices WHERE window_ends_at < now() - interval '1 hour' AND pending_count = 0
  ), ${emitEvents('flush', failedEvents('SELECT * FROM flushed')).trimStart()}
  SELECT count(*)::int AS events FROM flush_src`;

export const LIST_EVENTS = `SELECT e.id, e.seq::text AS seq, e.type,
            ${isoText('e.created_at')} AS timestamp, e.data, e.sent,
            c.status, c.attempt_count AS "attemptCount", c.last_error AS "lastError", c.delivered_at AS "deliveredAt"
       FROM operational_events e LEFT JOIN callbacks c ON c.id = e.id
      WHERE e.partner_id = $1 AND ($2::text IS NULL OR e.type = $2) AND ($3::bigint IS NULL OR e.seq < $3)
      ORDER BY e.seq DESC LIMIT $4`;

export interface EventRow {
  id: string;
  seq: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
  sent: boolean;
  status: string | null;
  attemptCount: number | null;
  lastError: string | null;
  deliveredAt: Date | null;
}

/**
 * An event's `waiting` counts the destination's callbacks among this many of its pending ones
 * (its operational events' deliveries left out): a bounded index range, whatever the backlog (at
 * the cap: at least that many).
 */
export const WAITING_CAP = 1000;

/** A relation of settled callbacks with none in it: a destinations write that settles no callback. */
export const NONE_SETTLED = `(SELECT NULL::uuid AS id, NULL::uuid AS partner_id, NULL::text AS destination,
  NULL::text AS status, NULL::text AS event_type,
  NULL::timestamptz AS next_attempt_at WHERE false)`;

/**
 * A CTE (`circuit_released`): the `pending` callbacks waiting in a retry's backoff at each
 * destination of `saved` whose circuit this write closed become due now — the probe's answer
 * proved the receiver, and they follow at its window (admission) — except those `settled` by the
 * same statement (their fate is the attempt's). Read by a range of `callbacks_admission_idx`
 * (that destination, due after now), so the rows already due are not read; due now, they are
 * above any floor admission holds (admission-floors.ts: a floor is at most a pass's now()). A row
 * another transaction holds (a URL change, a redelivery) is left to its retry.
 */
function releaseOnClosing(saved: string, settled: string): string {
  return `
  circuit_released AS (
    UPDATE callbacks c SET ${set(EVENT_WRITES['due now'])}
     WHERE c.id = ANY (ARRAY(
             SELECT p.id FROM ${saved} t,
               LATERAL (SELECT x.id FROM callbacks x
                         WHERE x.destination = t.key AND x.status = 'pending' AND x.next_attempt_at > now()
                           AND x.id NOT IN (SELECT y.id FROM ${settled} y)
                         FOR UPDATE SKIP LOCKED) p
              WHERE t.reported = 'closed'))
    RETURNING c.id
  )`;
}

/**
 * The `destination.failing` and `destination.recovered` events of the destinations `saved` (the
 * rows a destinations write returned: key, partner_id, origin, reported, failing_since, opened_at,
 * last_error) opened or closed, to the destination's partner (a destination is one partner's
 * origin: no other partner hears of it), with its callbacks waiting; a closing releases the
 * callbacks in backoff there (releaseOnClosing). `settled` (id, partner_id, destination, status,
 * event_type, next_attempt_at) are the callbacks the same statement settled: its other CTEs see
 * them as they were before, so they are counted by their new state. Closing, `waiting` counts what
 * goes out now: every pending one (released, or due already), and those settled back to waiting
 * only if due now (not a failure's retry in the same batch).
 */
export function circuitEvents(saved: string, settled: string): string {
  return `${releaseOnClosing(saved, settled)},${emitEvents(
    'circuit',
    `SELECT t.partner_id,
            CASE t.reported WHEN 'opened' THEN 'destination.failing' ELSE 'destination.recovered' END AS type,
            CASE t.reported
              WHEN 'opened' THEN json_build_object('destination', t.origin, 'since', ${isoText('t.opened_at')},
                                                   'lastError', t.last_error, 'waiting', w.n)
              ELSE json_build_object('destination', t.origin,
                                     'failingSince', ${isoText('to_timestamp(t.failing_since / 1000)')},
                                     'recoveredAt', ${isoText('now()')}, 'waiting', w.n)
            END AS data
       FROM ${saved} t
       -- WAITING_CAP of the destination's pending callbacks (a bounded range of an index with the destination
       -- first; no order, which a plan could take from an index of all destinations), with those this statement
       -- returned to waiting.
       CROSS JOIN LATERAL (SELECT count(*) FILTER (WHERE x.event_type IS NULL)::int AS n
                             FROM (SELECT c.id, c.event_type FROM callbacks c
                                    WHERE c.destination = t.key AND c.status = 'pending'
                                    LIMIT ${WAITING_CAP}) x
                            WHERE x.id NOT IN (SELECT y.id FROM ${settled} y)) untouched
       CROSS JOIN LATERAL (SELECT count(*)::int AS n FROM ${settled} z
                            WHERE z.destination = t.key AND z.status = 'pending' AND z.event_type IS NULL
                              AND (t.reported = 'opened' OR z.next_attempt_at <= now())) returned
       CROSS JOIN LATERAL (SELECT untouched.n + returned.n AS n) w
      WHERE t.reported IN ('opened', 'closed')`,
  )}`;
}

/** A partner's operational events, newest first. */
@Injectable()
export class OperationalEventRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** A partner's events, newest first (operational_events_partner_seq_idx), with their delivery's state. */
  listEvents(q: { partnerId: string; type?: string; beforeSeq?: string; rows: number }): Promise<EventRow[]> {
    return this.db.query(LIST_EVENTS, [q.partnerId, q.type ?? null, q.beforeSeq ?? null, q.rows]);
  }
}
