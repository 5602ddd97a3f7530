import type { AttemptKind } from '../callbacks/index.js';
import { breakerResult, isFinal, type SendResult } from '../egress/index.js';
import { DestinationState, settleDestination, Transition, WindowConfig } from './destination-window.js';
import { RetryPolicy } from './retry-policy.js';

/** What settlement needs of the callback a worker loaded. */
export interface SettlingRow {
  id: string;
  /** Its partner: the attempt's row carries it. */
  partner_id: string;
  destination: string;
  attempt_count: number;
  schedule_attempts: number;
  /** The attempts its schedule allows when fewer than the deployment's (a test callback: 1); null: all of it. */
  attempt_limit: number | null;
  /** schedule_started_at in microseconds, as text: a redelivery meanwhile changes it. */
  schedule_key: string;
  /** A test callback: its one attempt is a test's. */
  test: boolean;
  /** The repair that last restarted its schedule (a redelivery or a replay), if any. */
  restarted_by: 'redelivery' | 'replay' | null;
}

export interface Attempt {
  row: SettlingRow;
  /** When the request started and when its answer (or error) came, this process's clock (ms). */
  startedAt: number;
  answeredAt: number;
  result: SendResult;
  /** The request's headers as sent. */
  sent: Record<string, string>;
}

/**
 * What becomes of a callback: its next state, when it is due, its last error, whether the attempt
 * spent its schedule.
 */
export interface Fate {
  /** Delivered, pending again (a retry, or waiting for its destination), failed. */
  status: 'delivered' | 'pending' | 'failed';
  /** While pending: when it is due again, from now (0: due now, waiting for its destination). */
  delayMs: number | null;
  /** Its lastError from now; `keepsError`: the one it has stays (the partner's removal of its URL says why). */
  lastError: string | null;
  keepsError: boolean;
  /** Whether the attempt uses one of the callback's schedule (a failed probe of an open circuit does not). */
  counts: boolean;
}

/**
 * What one attempt comes to for its callback and its destination: its fate (the fields of Fate),
 * and its fate in the two cases only the record statement can see, since they happen while the
 * attempt is under way: the callback was redelivered meanwhile (its schedule restarted), or the
 * partner removed its URL meanwhile. The store's statement takes the one that applies.
 */
export interface SettledAttempt extends Fate {
  /** Its destination's key (callbacks.destination). */
  key: string;
  /** What the attempt was, for its log row. */
  place: AttemptPlace;
  ifRedelivered: Fate;
  ifUrlRemoved: Fate;
  destination: DestinationState;
  transition: Transition | null;
}

/** What an attempt was, its place in its callback's schedule (1: first) and how many that schedule allows. */
export interface AttemptPlace {
  kind: AttemptKind;
  scheduleNumber: number;
  scheduleAllows: number;
}

/** Of an attempt, what decides its outcome. */
type AttemptTimes = Omit<Attempt, 'row' | 'sent'> & {
  row: Pick<SettlingRow, 'destination' | 'schedule_attempts' | 'attempt_limit'> &
    Partial<Pick<SettlingRow, 'test' | 'restarted_by'>>;
};

/**
 * One attempt's outcome, decided against its destination's state at the moment it is recorded
 * (`skew` turns this process's clock into PostgreSQL's, which the states are kept in): the one
 * place that decides what becomes of a callback after an attempt.
 */
export function settleAttempt(
  state: DestinationState,
  a: AttemptTimes,
  skew: number,
  policy: RetryPolicy,
  cfg: WindowConfig,
): SettledAttempt {
  // How the attempt counts for its destination, in PostgreSQL's clock.
  const result = {
    result: breakerResult(a.result.outcome),
    startedAt: a.startedAt + skew,
    at: a.answeredAt + skew,
    error: a.result.error,
  };
  const probe = state.openedAt !== null && result.startedAt >= state.openedAt;
  const { state: destination, transition } = settleDestination(state, result, cfg);
  const fate = fateOf(a, probe, policy);
  const delivered = fate.status === 'delivered';
  return {
    ...fate,
    key: a.row.destination,
    place: placeOf(a.row, probe, policy),
    destination,
    transition,
    // Its fresh schedule stands: due now, this attempt spent none of it (unless it delivered it).
    ifRedelivered: delivered
      ? fate
      : { status: 'pending', delayMs: 0, lastError: fate.lastError, keepsError: false, counts: false },
    // No further attempt: failed, its lastError the removal's (unless this attempt delivered it).
    ifUrlRemoved: delivered
      ? fate
      : { status: 'failed', delayMs: null, lastError: null, keepsError: true, counts: false },
  };
}

/**
 * The fate of an attempt's callback on its schedule. An attempt to an open circuit is its probe:
 * failing, it is logged but spends none of the callback's schedule, and the callback waits with
 * the others for the circuit to close.
 */
function fateOf(a: AttemptTimes, probe: boolean, policy: RetryPolicy): Fate {
  const outcome = a.result.outcome;
  const allowed = a.row.attempt_limit ?? policy.maxAttempts;
  const decision = policy.decide(a.row.schedule_attempts + 1, outcome, allowed);
  if (decision.action === 'delivered')
    return { status: 'delivered', delayMs: null, lastError: null, keepsError: false, counts: true };
  const what = a.result.error ?? (a.result.statusCode !== null ? `HTTP ${a.result.statusCode}` : 'unknown error');
  // A failed probe spends none of the schedule, unless the schedule is shorter than the
  // deployment's and this was its last attempt (a test callback's one attempt is its only one).
  const lastOfShortSchedule = allowed < policy.maxAttempts && a.row.schedule_attempts + 1 >= allowed;
  if (probe && !isFinal(outcome) && !lastOfShortSchedule)
    return { status: 'pending', delayMs: 0, lastError: what, keepsError: false, counts: false };
  if (decision.action === 'retry')
    return { status: 'pending', delayMs: decision.delayMs, lastError: what, keepsError: false, counts: true };
  return {
    status: 'failed',
    delayMs: null,
    lastError: isFinal(outcome) ? what : `${what} (attempt schedule exhausted)`,
    keepsError: false,
    counts: true,
  };
}

/**
 * What an attempt was: a test callback's one, the probe of its open destination (which a failed
 * one spends none of the schedule for), the first of its schedule (after a redelivery or a replay:
 * that one's), or a retry.
 */
function placeOf(row: AttemptTimes['row'], probe: boolean, policy: RetryPolicy): AttemptPlace {
  const place = { scheduleNumber: row.schedule_attempts + 1, scheduleAllows: row.attempt_limit ?? policy.maxAttempts };
  if (row.test) return { kind: 'test', ...place };
  if (probe) return { kind: 'probe', ...place };
  return { kind: row.schedule_attempts === 0 ? (row.restarted_by ?? 'first') : 'retry', ...place };
}

const OUTAGE_END = 'attempt schedule ended while waiting';

/**
 * The fate of a callback still waiting behind its destination's open circuit when its schedule's
 * total has passed: failed, without an attempt, its lastError naming the outage (the sweep's).
 */
export function outageError(origin: string, openedAt: number, lastError: string | null): string {
  return (
    `destination ${origin} unavailable (circuit open since ${new Date(openedAt).toISOString()}` +
    `${lastError ? `, last error: ${lastError}` : ''}); ${OUTAGE_END}`
  );
}

/**
 * Whether a failed callback's lastError is {@link outageError}'s: its schedule ended while its
 * destination was open.
 */
export const endedByOutage = (lastError: string | null): boolean => lastError?.endsWith(`); ${OUTAGE_END}`) ?? false;

/**
 * A test callback (or test event) recorded while its destination's circuit is open: failed at
 * once, unsent, naming the circuit.
 */
export function testNotSentError(origin: string, openedAt: number, lastError: string | null, what = 'test callback') {
  const since = new Date(openedAt).toISOString();
  const last = lastError ? ` (last error: ${lastError})` : '';
  return `destination ${origin} circuit open since ${since}${last}; ${what} not sent`;
}
