import { InputColumns, microsKey } from '../../platform/index.js';
import type { AttemptKind } from '../callback.entity.js';
import { FOLLOW_MOVE } from './admission.js';
import { saveDestinations } from './destination-states.js';
import { FATE_STATUSES, set, settle, UNLEASED } from './lifecycle.js';
import { circuitEvents, emitEvents, NONE_SETTLED, noteFailures } from './operational-events.js';

/** What becomes of a callback (delivery/settle-attempt.ts decides; this statement takes it). */
export interface RecordedFate {
  status: (typeof FATE_STATUSES)[number];
  delayMs: number | null;
  lastError: string | null;
  keepsError: boolean;
  counts: boolean;
}

/** One attempt as the record statement takes it: the attempt's log row, and its callback's fate in each case. */
export interface AttemptRecord {
  id: string;
  /** The callback's partner: the attempt carries it for the portal's chart (its index is by partner). */
  partnerId: string;
  /** The callback's attempt_count the attempt was made at (its number is one more). */
  attemptCount: number;
  scheduleKey: string;
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
  sourceAddress: string | null;
  kind: AttemptKind;
  scheduleNumber: number;
  scheduleAllows: number;
  /** The request's headers as sent, and the answer's status line and headers (bounded by the sender). */
  requestHeaders: Record<string, string>;
  responseStatus: string | null;
  responseHeaders: [string, string][] | null;
  fate: RecordedFate;
  ifRedelivered: RecordedFate;
  ifUrlRemoved: RecordedFate;
}

const fateColumns = (prefix: string, pick: (r: AttemptRecord) => RecordedFate) => [
  { name: `${prefix}status`, type: 'text', value: (r: AttemptRecord) => pick(r).status },
  { name: `${prefix}delay_ms`, type: 'float8', value: (r: AttemptRecord) => pick(r).delayMs },
  { name: `${prefix}last_error`, type: 'text', value: (r: AttemptRecord) => pick(r).lastError },
  { name: `${prefix}keeps_error`, type: 'boolean', value: (r: AttemptRecord) => pick(r).keepsError },
  { name: `${prefix}counts`, type: 'int', value: (r: AttemptRecord) => (pick(r).counts ? 1 : 0) },
];

/** The record statement's input: one row per attempt. */
const RECORD_INPUT = new InputColumns<AttemptRecord>([
  { name: 'id', type: 'uuid', value: (r) => r.id },
  { name: 'partner_id', type: 'uuid', value: (r) => r.partnerId },
  { name: 'number', type: 'int', value: (r) => r.attemptCount + 1 },
  { name: 'started_at', type: 'float8', value: (r) => r.startedAt },
  { name: 'duration_ms', type: 'int', value: (r) => r.durationMs },
  { name: 'status_code', type: 'int', value: (r) => r.statusCode },
  { name: 'error', type: 'text', value: (r) => r.error },
  { name: 'response_body', type: 'text', value: (r) => r.responseBody },
  { name: 'source_address', type: 'text', value: (r) => r.sourceAddress },
  { name: 'kind', type: 'text', value: (r) => r.kind },
  { name: 'schedule_number', type: 'int', value: (r) => r.scheduleNumber },
  { name: 'schedule_allows', type: 'int', value: (r) => r.scheduleAllows },
  { name: 'request_headers', type: 'text', value: (r) => JSON.stringify(r.requestHeaders) },
  { name: 'response_status', type: 'text', value: (r) => r.responseStatus },
  {
    name: 'response_headers',
    type: 'text',
    value: (r) => (r.responseHeaders === null ? null : JSON.stringify(r.responseHeaders)),
  },
  { name: 'attempt_count', type: 'int', value: (r) => r.attemptCount },
  { name: 'schedule_key', type: 'text', value: (r) => r.scheduleKey },
  ...fateColumns('', (r) => r.fate),
  ...fateColumns('r_', (r) => r.ifRedelivered),
  ...fateColumns('u_', (r) => r.ifUrlRemoved),
]);

export const recordParams = (records: AttemptRecord[]): unknown[] => RECORD_INPUT.params(records);

/**
 * Which of the three fates applies, by what happened to the callback while its attempt was under
 * way: the partner removed its URL, it was redelivered (its schedule restarted), or neither.
 */
const CASE = (column: string) => `CASE WHEN c.url_removed_at IS NOT NULL THEN s.u_${column}
              WHEN ${microsKey('c.schedule_started_at')} <> s.schedule_key THEN s.r_${column} ELSE s.${column} END`;

/** Which operational events a record statement writes with the change it makes. */
export interface Reports {
  /** A destination's circuit opened or closed. */
  circuit: boolean;
  /** Callbacks failed for good. */
  failures: boolean;
}

/**
 * Callbacks this statement failed after their last attempt (or a final answer), by destination
 * and partner: what a `callbacks.failed` event counts (a test callback, an event's delivery, and
 * one whose URL the partner removed are not).
 */
const FAILED_BY_ATTEMPT = `SELECT partner_id, destination, count(*)::int AS n FROM settled
  WHERE status = 'failed' AND NOT test AND event_type IS NULL AND url_removed_at IS NULL
  GROUP BY partner_id, destination`;

/**
 * The attempts, their callbacks' fates and their destinations' new windows, in one statement (it
 * yields the destinations written), with the operational events of what it changed. The fates
 * are settle-attempt.ts's; this statement only picks the one that applies (CASE). A callback whose
 * lease lapsed meanwhile (back to `pending`, not attempted since) still takes its fate; a callback
 * moved to another URL meanwhile takes it now (FOLLOW_MOVE). The attempt is logged either way.
 */
function recordStatement(reports: Reports): string {
  return `
  WITH input AS (
    SELECT * FROM ${RECORD_INPUT.unnest('t')}
  ), attempt AS (
    INSERT INTO callback_attempts (callback_id, partner_id, number, started_at, duration_ms, status_code, error,
                                   response_body, source_address,
                                   kind, schedule_number, schedule_allows, request_headers, response_status,
                                   response_headers)
    SELECT id, partner_id, number, to_timestamp(started_at / 1000), duration_ms, status_code, error, response_body,
           source_address,
           kind, schedule_number, schedule_allows, request_headers::jsonb, response_status, response_headers::jsonb
      FROM input
  ), saved AS (${saveDestinations(RECORD_INPUT.count + 1)}
  ), settled AS (
  UPDATE callbacks c
     SET attempt_count = c.attempt_count + 1,
         ${settle(CASE)},
         ${FOLLOW_MOVE},
         ${set(UNLEASED)}
    FROM input s
   -- The attempts' callbacks by primary-key probes (an array, as ADMIT's): a join alone lets a generic plan
   -- read the table.
   WHERE c.id = ANY (ARRAY(SELECT id FROM input)) AND c.id = s.id AND c.attempt_count = s.attempt_count
     -- failed meanwhile (its schedule ended during an outage after its lease lapsed): only a delivery is recorded on it
     AND (c.status IN ('sending', 'pending') OR s.status = 'delivered')
  RETURNING c.id, c.partner_id, c.destination, c.status, c.test, c.event_type, c.url_removed_at, c.next_attempt_at
  )${reports.circuit ? `,${circuitEvents('saved', 'settled')}` : ''}${
    reports.failures
      ? `,${noteFailures('failures', FAILED_BY_ATTEMPT)},${emitEvents('failed', 'SELECT * FROM failures_emit')}`
      : ''
  }
  SELECT key FROM saved`;
}

/**
 * The record statement for a batch, prepared once for each combination of its reports (nearly every batch has
 * none).
 */
export function recordFor(reports: Reports): { name: string; text: string } {
  const name = ['settlement-record', reports.circuit ? 'circuit' : '', reports.failures ? 'failures' : '']
    .filter(Boolean)
    .join('+');
  let statement = RECORDS.get(name);
  if (!statement) RECORDS.set(name, (statement = { name, text: recordStatement(reports) }));
  return statement;
}
const RECORDS = new Map<string, { name: string; text: string }>();

/** A refold's write of destinations; with `circuit`, the events of the circuits it opened or closed. */
export function saveFor(reports: Pick<Reports, 'circuit'>): { name: string; text: string } {
  return reports.circuit
    ? {
        name: 'settlement-refold+circuit',
        text: `WITH saved AS (${saveDestinations(1)}),${circuitEvents('saved', NONE_SETTLED)}\n  SELECT key FROM saved`,
      }
    : { name: 'settlement-refold', text: saveDestinations(1) };
}
