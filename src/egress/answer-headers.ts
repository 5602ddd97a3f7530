import type http from 'node:http';

/**
 * What the attempt log keeps of an answer's headers: this many, each value cut at VALUE_LIMIT,
 * all within TOTAL_LIMIT.
 */
export const HEADER_COUNT_LIMIT = 32;
export const HEADER_VALUE_LIMIT = 256;
export const HEADERS_TOTAL_LIMIT = 2048;
const NAME_LIMIT = 64;
const STATUS_LIMIT = 128;

/** An answer as the attempt log keeps it: its status line and its first headers, bounded and safe to store. */
export interface AnswerHead {
  status: string;
  headers: [string, string][];
}

/** Headers whose values are credentials a receiver hands its own clients: kept by name, never by value. */
const CREDENTIAL_HEADERS = new Set(['set-cookie', 'set-cookie2', 'authorization', 'proxy-authorization']);
export const WITHHELD = '(withheld)';

/** Control characters (NUL, which PostgreSQL's text refuses, among them) become U+FFFD. */
const safe = (s: string, limit: number) => s.slice(0, limit).replace(/\p{Cc}/gu, '\ufffd');

/**
 * The answer's status line (`HTTP/1.1 500 Internal Server Error`) and its headers in the order
 * they came (names as sent; a cookie or credential's value withheld): at most HEADER_COUNT_LIMIT,
 * values cut at HEADER_VALUE_LIMIT, and none once HEADERS_TOTAL_LIMIT characters are kept. A
 * bounded copy of what Node already parsed: no read of its own, whatever a receiver sends.
 */
export function answerHead(
  res: Pick<http.IncomingMessage, 'httpVersion' | 'statusCode' | 'statusMessage' | 'rawHeaders'>,
): AnswerHead {
  const status = safe(
    `HTTP/${res.httpVersion} ${res.statusCode ?? 0} ${res.statusMessage ?? ''}`.trimEnd(),
    STATUS_LIMIT,
  );
  const headers: [string, string][] = [];
  let total = 0;
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length && headers.length < HEADER_COUNT_LIMIT; i += 2) {
    const name = safe(raw[i], NAME_LIMIT);
    const value = CREDENTIAL_HEADERS.has(name.toLowerCase()) ? WITHHELD : safe(raw[i + 1], HEADER_VALUE_LIMIT);
    const header: [string, string] = [name, value];
    total += header[0].length + header[1].length;
    if (total > HEADERS_TOTAL_LIMIT) break;
    headers.push(header);
  }
  return { status, headers };
}
