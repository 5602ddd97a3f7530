import { breakerResult, isFinal } from '../egress/attempt-outcome.js';
import { DestinationState, settleDestination, Transition, WindowConfig } from './destination-window.js';
import { RetryPolicy } from './retry-policy.js';
import type { SendResult } from '../egress/callback-sender.js';

/** What settlement needs of the callback a worker loaded. */
export interface SettlingRow {
  id: string;
  destination: string;
  attempt_count: number;
  schedule_attempts: number;
  /** The attempts its schedule allows when fewer than the deployment's (a test callback: 1); null: all of it. */
  attempt_limit: number | null;
  /** schedule_started_at in microseconds, as text: a redelivery meanwhile changes it. */
  schedule_key: string;
}

export interface Attempt {
  row: SettlingRow;
  /** When the request started and when its answer (or error) came, this process's clock (ms). */
  startedAt: number;
  answeredAt: number;
  result: SendResult;
}

/** What one attempt comes to for its callback and its destination. */
export interface SettledAttempt {
  origin: string;
  /** The callback's next state: delivered, pending again (retry or waiting for its destination), failed. */
  status: 'delivered' | 'pending' | 'failed';
  /** While pending: when it is due again, from now (0: due now, waiting for its destination). */
  delayMs: number | null;
  lastError: string | null;
  /** Whether the attempt uses one of the callback's schedule (a failed probe of an open circuit does not). */
  counts: boolean;
  destination: DestinationState;
  transition: Transition | null;
}

/** Of an attempt, what decides its outcome. */
type AttemptTimes = Omit<Attempt, 'row'> & { row: Pick<SettlingRow, 'destination' | 'schedule_attempts' | 'attempt_limit'> };

/**
 * One attempt's outcome, decided against its destination's state at the moment it is recorded
 * (`skew` turns this process's clock into PostgreSQL's, which the states are kept in). An attempt
 * to an open circuit is its probe: failing, it is logged but spends none of the callback's
 * schedule, and the callback waits with the others for the circuit to close.
 */
export function settleAttempt(state: DestinationState, a: AttemptTimes, skew: number, policy: RetryPolicy, cfg: WindowConfig): SettledAttempt {
  const outcome = a.result.outcome;
  // How the attempt counts for its destination, in PostgreSQL's clock.
  const result = { result: breakerResult(outcome), startedAt: a.startedAt + skew, at: a.answeredAt + skew, error: a.result.error };
  const probe = state.openedAt !== null && result.startedAt >= state.openedAt;
  const { state: destination, transition } = settleDestination(state, result, cfg);
  const allowed = a.row.attempt_limit ?? policy.maxAttempts;
  const decision = policy.decide(a.row.schedule_attempts + 1, outcome, allowed);
  const base = { origin: a.row.destination, destination, transition };
  if (decision.action === 'delivered') return { ...base, status: 'delivered', delayMs: null, lastError: null, counts: true };
  const what = a.result.error ?? (a.result.statusCode !== null ? `HTTP ${a.result.statusCode}` : 'unknown error');
  // A failed probe spends none of the schedule, unless the schedule is shorter than the
  // deployment's and this was its last attempt (a test callback's one attempt is its only one).
  const lastOfShortSchedule = allowed < policy.maxAttempts && a.row.schedule_attempts + 1 >= allowed;
  if (probe && !isFinal(outcome) && !lastOfShortSchedule) return { ...base, status: 'pending', delayMs: 0, lastError: what, counts: false };
  if (decision.action === 'retry') return { ...base, status: 'pending', delayMs: decision.delayMs, lastError: what, counts: true };
  return { ...base, status: 'failed', delayMs: null, lastError: isFinal(outcome) ? what : `${what} (attempt schedule exhausted)`, counts: true };
}
