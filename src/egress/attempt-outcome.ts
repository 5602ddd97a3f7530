/**
 * What one delivery attempt came to, by type, and the rules every reader of an outcome goes by:
 * the sender (what it records as an error), settlement (delivered, retried, failed), the retry
 * policy and the dashboard. Decisions never match on message text.
 */
export type AttemptOutcome =
  /** The receiver answered (any status: 2xx is success). */
  | { kind: 'http'; statusCode: number; retryAfter?: string | null }
  /** No answer within CALLBACK_TIMEOUT_MS, or no connection within CALLBACK_CONNECT_TIMEOUT_MS. */
  | { kind: 'timeout' }
  /** The connection failed or broke (refused, reset, DNS). */
  | { kind: 'network' }
  /** The TLS handshake failed: either side refused the other's certificate, or no protocol was agreed. */
  | { kind: 'tls' }
  /** No request went out: the URL or the address it resolved to may not be reached. */
  | { kind: 'refused' };

/** A 2xx answer: the callback is delivered (the dashboard judges a recorded attempt's status code by it). */
export const isSuccessStatus = (statusCode: number | null): boolean =>
  statusCode !== null && statusCode >= 200 && statusCode < 300;

export const isSuccess = (o: AttemptOutcome): boolean => o.kind === 'http' && isSuccessStatus(o.statusCode);

/**
 * Ends the callback at once, whatever is left of its schedule and whatever its destination's
 * state: `410 Gone` (the receiver is gone for good) and a refused destination.
 */
export const isFinal = (o: AttemptOutcome): boolean =>
  o.kind === 'refused' || (o.kind === 'http' && o.statusCode === 410);

/** Retried on the schedule while attempts are left: everything else, `4xx` included. */
export const isRetryable = (o: AttemptOutcome): boolean => !isSuccess(o) && !isFinal(o);

/**
 * How an attempt counts for its destination's window and breaker (docs/partners.md, "Retries,
 * outages and `Retry-After`"; docs/architecture.md, "Windows and the breaker").
 */
export type BreakerResult =
  /** 2xx */
  | 'ok'
  /**
   * network error, TLS handshake failure, 5xx, 429: the destination is struggling (or cannot be
   * reached as configured)
   */
  | 'fail'
  /**
   * timeout: a failure that said nothing at all, and held its request (a waiting place) for the
   * whole timeout
   */
  | 'silent'
  /** any other answer: the destination is up, the request was not accepted */
  | 'answered'
  /** no request went out (destination refused): says nothing of the destination */
  | 'none';

export function breakerResult(o: AttemptOutcome): BreakerResult {
  switch (o.kind) {
    case 'timeout':
      return 'silent';
    case 'network':
    case 'tls':
      return 'fail';
    case 'refused':
      return 'none';
    case 'http':
      if (isSuccess(o)) return 'ok';
      return o.statusCode >= 500 || o.statusCode === 429 ? 'fail' : 'answered';
  }
}
