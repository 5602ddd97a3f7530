/**
 * A destination's window and circuit breaker as one pure function of its state and one attempt's
 * outcome (docs/partners.md, "Retries, outages and `Retry-After`"; docs/architecture.md, "Windows
 * and the breaker"). PostgreSQL keeps the state (table `destinations`), shared by every process;
 * settlement.ts folds each batch of outcomes through `settleDestination`, and admission asks
 * `roomOf` how many more callbacks a destination may have in flight.
 */
import { probeReady } from '../callbacks/index.js';
import type { BreakerResult } from '../egress/index.js';

export interface DestinationState {
  /** Deliveries it may have in flight while closed, earned by successes (1 … max). */
  window: number;
  /** Consecutive failed attempts. */
  failures: number;
  /** When the circuit opened (ms); null = closed. */
  openedAt: number | null;
  /** When an open circuit's next probe may go (ms). */
  nextProbeAt: number | null;
  /** The interval that set nextProbeAt (doubles after each failed probe). */
  probeMs: number;
  lastError: string | null;
  /** The last 2xx or other answer with no failure since (ms). */
  lastOkAt: number | null;
  /**
   * A person asked for the next probe (a manual redelivery while open: destinations.probe_id):
   * it goes as soon as nothing is in flight, whatever nextProbeAt says. Kept by the fold (admission
   * clears it as it admits a probe), gone with the circuit when it closes.
   */
  probeAsked: boolean;
}

export interface WindowConfig {
  /** The window of an unproven destination: new, idle for PROVEN_FOR_MS, or just closed. */
  initial: number;
  max: number;
  threshold: number;
  probe: { first: number; last: number };
}

export interface AttemptResult {
  result: BreakerResult;
  /** When the attempt started and when its answer came (ms). */
  startedAt: number;
  at: number;
  error: string | null;
}

export type Transition = 'opened' | 'reopened' | 'closed';

/** A destination's window starts this small and grows by one per success. */
export const INITIAL_WINDOW = 2;
/** A destination that has not answered for this long is unproven again: its window starts small. */
export const PROVEN_FOR_MS = 5 * 60_000;

export const newDestination = (cfg: WindowConfig): DestinationState => ({
  window: Math.min(cfg.initial, cfg.max),
  failures: 0,
  openedAt: null,
  nextProbeAt: null,
  probeMs: 0,
  lastError: null,
  lastOkAt: null,
  probeAsked: false,
});

/**
 * The next state after one attempt. Closed: a success grows the window by one (up to max), a
 * failure halves it and counts; the threshold-th consecutive failure opens the circuit, and so does
 * a timeout of one that has never answered (unheardSilence). Open: only attempts started after it
 * opened (its probes) count; an answer closes it with the initial window, a failure doubles the
 * probe interval (up to its last).
 */
export function settleDestination(
  s: DestinationState,
  a: AttemptResult,
  cfg: WindowConfig,
): { state: DestinationState; transition: Transition | null } {
  if (a.result === 'none') return { state: s, transition: null };
  const answered = a.result === 'ok' || a.result === 'answered';
  if (s.openedAt !== null) {
    // An answer to a request sent before the circuit opened says nothing of the destination now.
    if (a.startedAt < s.openedAt) return { state: s, transition: null };
    if (answered) return { state: { ...newDestination(cfg), lastOkAt: a.at }, transition: 'closed' };
    const probeMs = Math.min(cfg.probe.last, Math.max(cfg.probe.first, s.probeMs * 2));
    return {
      state: { ...s, failures: s.failures + 1, probeMs, nextProbeAt: a.at + probeMs, lastError: a.error },
      transition: 'reopened',
    };
  }
  if (answered)
    return { state: { ...s, window: Math.min(cfg.max, s.window + 1), failures: 0, lastOkAt: a.at }, transition: null };
  const failures = s.failures + 1;
  const window = Math.max(1, Math.floor(s.window / 2));
  if (failures < cfg.threshold && !unheardSilence(s, a.result))
    return { state: { ...s, window, failures, lastError: a.error }, transition: null };
  const probeMs = cfg.probe.first;
  return {
    state: { ...s, window, failures, lastError: a.error, openedAt: a.at, probeMs, nextProbeAt: a.at + probeMs },
    transition: 'opened',
  };
}

/**
 * A timeout of a destination that has never answered: it opens the circuit whatever the count.
 * Each of its attempts holds a waiting place for the whole timeout, so at the threshold's count
 * 10,000 such destinations would need ten times the places (and their memory) to open within
 * minutes (docs/architecture.md, "Windows and the breaker"). One that has answered before counts
 * its timeouts as any other failure.
 */
function unheardSilence(s: DestinationState, result: BreakerResult): boolean {
  return result === 'silent' && s.lastOkAt === null;
}

/** Closed, no failure since its last answer, and that answer recent: it may use its whole window. */
export function isProven(s: DestinationState, now: number): boolean {
  return s.openedAt === null && s.failures === 0 && s.lastOkAt !== null && now - s.lastOkAt < PROVEN_FOR_MS;
}

/** Failed attempts in a row, or open: its requests hang or fail, so it shares the failing slots (admission-plan.ts). */
export function isFailing(s: DestinationState): boolean {
  return s.openedAt !== null || s.failures > 0;
}

/**
 * How many more of its callbacks may be admitted now, with `sending` in flight: an open circuit
 * takes one probe when nothing is in flight and its probe is due or was asked for (probeReady); a
 * closed one fills its window, an unproven one no more than the initial window.
 */
export function roomOf(s: DestinationState, sending: number, now: number, cfg: WindowConfig): number {
  if (s.openedAt !== null) return sending === 0 && probeReady(s, now) ? 1 : 0;
  const window = Math.min(cfg.max, isProven(s, now) ? s.window : Math.min(s.window, cfg.initial));
  return Math.max(0, window - sending);
}

/**
 * The state operators and partners see: half-open while an open circuit's probe is in flight or
 * ready to go (due, or asked for: its next callback is the probe, whether or not one waits); open
 * while it waits for a probe time still to come.
 */
export function circuitOf(s: DestinationState, sending: number, now: number): 'closed' | 'open' | 'half_open' {
  if (s.openedAt === null) return 'closed';
  return sending > 0 || probeReady(s, now) ? 'half_open' : 'open';
}

export function windowConfigOf(c: {
  callbackDestinationConcurrency: number;
  callbackBreakerThreshold: number;
  callbackBreakerProbeMs: { first: number; last: number };
}): WindowConfig {
  const max = c.callbackDestinationConcurrency;
  return {
    initial: Math.min(INITIAL_WINDOW, max),
    max,
    threshold: c.callbackBreakerThreshold,
    probe: c.callbackBreakerProbeMs,
  };
}
