import { AttemptOutcome, isRetryable, isSuccess } from '../egress/index.js';

export type Decision = { action: 'delivered' } | { action: 'retry'; delayMs: number } | { action: 'fail' };

const JITTER = 0.2;
const RETRY_AFTER_CAP_MS = 24 * 3600 * 1000;

/** `Retry-After` as delta-seconds or an HTTP date, in ms from now; null when absent or invalid. */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | null {
  if (!value) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  if (!/[a-z]/i.test(v)) return null; // a bare number with sign or decimals is not a valid date either
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * The retry schedule as data: `scheduleMs[n-1]` is the delay after the n-th failed attempt, so
 * a schedule of 7 delays allows 8 attempts. What is retried and what ends the callback at once is
 * attempt-outcome.ts's (any non-2xx answer is retried, 4xx included: a partner's misconfigured
 * endpoint is usually fixed within hours and the schedule is bounded).
 */
export class RetryPolicy {
  constructor(
    private readonly scheduleMs: number[],
    private readonly random: () => number = Math.random,
    private readonly now: () => number = Date.now,
  ) {}

  get maxAttempts(): number {
    return this.scheduleMs.length + 1;
  }

  /**
   * The schedule's total: a callback still waiting behind an open circuit this long after its
   * schedule started fails (admission's sweep).
   */
  get totalMs(): number {
    return this.scheduleMs.reduce((a, b) => a + b, 0);
  }

  /**
   * What follows the `attemptsMade`-th attempt of a schedule that allows `allowed` attempts (the
   * whole schedule unless the callback's own is shorter: a test callback allows 1).
   */
  decide(attemptsMade: number, outcome: AttemptOutcome, allowed: number = this.maxAttempts): Decision {
    if (isSuccess(outcome)) return { action: 'delivered' };
    if (!isRetryable(outcome) || attemptsMade >= Math.min(allowed, this.maxAttempts)) return { action: 'fail' };
    const base = this.scheduleMs[attemptsMade - 1];
    let delayMs = Math.round(base * (1 + JITTER * (2 * this.random() - 1)));
    if (outcome.kind === 'http' && (outcome.statusCode === 429 || outcome.statusCode === 503)) {
      const floor = parseRetryAfter(outcome.retryAfter, this.now());
      if (floor !== null) delayMs = Math.max(delayMs, Math.min(floor, RETRY_AFTER_CAP_MS));
    }
    return { action: 'retry', delayMs };
  }
}
