import { breakerResult } from './callback-delivery.js';
import { outageError } from './destination-parking.js';
import { safeText } from './callback-sender.js';
import { AttemptOutcome } from './retry-policy.js';

describe('how an attempt counts for the circuit breaker', () => {
  it.each<[string, AttemptOutcome, string]>([
    ['2xx closes', { kind: 'http', statusCode: 204 }, 'ok'],
    ['success closes', { kind: 'success' }, 'ok'],
    ['timeout counts', { kind: 'timeout' }, 'fail'],
    ['network error counts', { kind: 'network' }, 'fail'],
    ['500 counts', { kind: 'http', statusCode: 500 }, 'fail'],
    ['503 counts', { kind: 'http', statusCode: 503 }, 'fail'],
    ['429 counts', { kind: 'http', statusCode: 429 }, 'fail'],
    ['404 is an answer', { kind: 'http', statusCode: 404 }, 'answered'],
    ['410 is an answer', { kind: 'http', statusCode: 410 }, 'answered'],
    ['302 is an answer', { kind: 'http', statusCode: 302 }, 'answered'],
    ['a refused destination sent nothing', { kind: 'refused' }, 'none'],
  ])('%s', (_name, outcome, result) => expect(breakerResult(outcome)).toBe(result));
});

describe('outageError', () => {
  const base = { origin: 'https://a.example', consecutiveFailures: 5, nextProbeAt: null, waiting: 3, inFlight: 0, leases: [], room: 0 };
  it('names the open circuit, since when, and its last error', () => {
    expect(outageError('https://a.example', { ...base, state: 'open', openedAt: new Date('2026-11-23T10:00:00Z'), lastError: 'HTTP 503' })).toBe(
      'destination https://a.example unavailable (circuit open since 2026-11-23T10:00:00.000Z, last error: HTTP 503); attempt schedule ended while waiting',
    );
  });
  it('names a destination that had no free slot', () => {
    expect(outageError('https://a.example', { ...base, state: 'closed', openedAt: null, lastError: null })).toBe(
      'destination https://a.example had no free delivery slot; attempt schedule ended while waiting',
    );
  });
});

describe('safeText', () => {
  it.each([
    [[0x6f, 0x6b], 'ok'],
    [[0x61, 0x00, 0x62], 'a\ufffdb'],
    [[0xff, 0xfe], '\ufffd\ufffd'],
    [[0xe2, 0x82], '\ufffd'], // a character cut at the 1 KiB mark
    [[0xed, 0xa0, 0x80], '\ufffd\ufffd\ufffd'], // an encoded lone surrogate is not UTF-8
  ])('%j → %j', (bytes, text) => expect(safeText(Buffer.from(bytes))).toBe(text));
});
