import type { CallbackAttempt } from '../callbacks/index.js';
import { HEADER_COUNT_LIMIT, HEADER_VALUE_LIMIT } from '../egress/index.js';

/** What the answer's label says was kept of its headers. */
export const ANSWER_KEPT = `at most ${HEADER_COUNT_LIMIT} headers, each value's first ${HEADER_VALUE_LIMIT} characters`;

/** The request headers in the order the partner guide names them; any other after them, by name. */
const REQUEST_ORDER = ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'content-type', 'user-agent'];

type Stored = Pick<CallbackAttempt, 'kind' | 'scheduleNumber' | 'scheduleAllows'>;

/**
 * What an attempt was, as recorded when it settled: first attempt, retry n of N (its schedule's
 * retries), the probe of its open destination, the first after a redelivery or a replay, a test
 * callback's one attempt. Null for an attempt recorded before kinds were kept.
 */
export function kindLabel({ kind, scheduleNumber: n, scheduleAllows: of }: Stored): string | null {
  const place = n !== null && of !== null ? ` (attempt ${n} of the ${of} its schedule allows)` : '';
  switch (kind) {
    case null:
      return null;
    case 'first':
      return 'first attempt';
    case 'retry':
      return n !== null && of !== null ? `retry ${n - 1} of ${of - 1}` : 'retry';
    case 'probe':
      return `probe of its open destination${place}`;
    case 'redelivery':
      return 'first attempt after a redelivery';
    case 'replay':
      return 'first attempt after a replay';
    case 'test':
      return "a test callback's one attempt";
  }
}

/** The request's headers as sent, one `name: value` a line (null: not recorded). */
export function requestText(headers: Record<string, string> | null): string | null {
  if (headers === null) return null;
  const rank = (name: string) => (REQUEST_ORDER.includes(name) ? REQUEST_ORDER.indexOf(name) : REQUEST_ORDER.length);
  const names = Object.keys(headers).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  return names.map((name) => `${name}: ${headers[name]}`).join('\n');
}

/** The answer's status line, then its headers as kept, one a line (null: no answer, or not recorded). */
export function answerText(status: string | null, headers: [string, string][] | null): string | null {
  if (status === null) return null;
  return [status, ...(headers ?? []).map(([name, value]) => `${name}: ${value}`)].join('\n');
}
