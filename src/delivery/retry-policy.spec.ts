import type { AttemptOutcome } from '../egress/attempt-outcome.js';
import { parseRetryAfter, RetryPolicy } from './retry-policy.js';

const S = 1000;
const SCHEDULE = [5 * S, 300 * S, 1800 * S, 7200 * S, 18000 * S, 36000 * S, 36000 * S];
const NOW = Date.parse('2026-11-22T12:00:00Z');
const exact = new RetryPolicy(
  SCHEDULE,
  () => 0.5,
  () => NOW,
);

describe('RetryPolicy', () => {
  it.each<[string, AttemptOutcome, string]>([
    ['200', { kind: 'http', statusCode: 200 }, 'delivered'],
    ['204', { kind: 'http', statusCode: 204 }, 'delivered'],
    ['302 (redirects are not followed)', { kind: 'http', statusCode: 302 }, 'retry'],
    ['400', { kind: 'http', statusCode: 400 }, 'retry'],
    ['404', { kind: 'http', statusCode: 404 }, 'retry'],
    ['408', { kind: 'http', statusCode: 408 }, 'retry'],
    ['410 Gone', { kind: 'http', statusCode: 410 }, 'fail'],
    ['429', { kind: 'http', statusCode: 429 }, 'retry'],
    ['500', { kind: 'http', statusCode: 500 }, 'retry'],
    ['503', { kind: 'http', statusCode: 503 }, 'retry'],
    ['timeout', { kind: 'timeout' }, 'retry'],
    ['network error', { kind: 'network' }, 'retry'],
    ['refused destination', { kind: 'refused' }, 'fail'],
  ])('after a first attempt answered %s: %s', (_, outcome, action) => {
    expect(exact.decide(1, outcome).action).toBe(action);
  });

  it.each(SCHEDULE.map((ms, i) => [i + 1, ms]))(
    'after failed attempt %i waits the schedule delay %i ms (no jitter at 0.5)',
    (n, ms) => {
      expect(exact.decide(n, { kind: 'timeout' })).toEqual({ action: 'retry', delayMs: ms });
    },
  );

  it('fails after the eighth attempt of a seven-delay schedule, which lasts the delays together', () => {
    expect(exact.maxAttempts).toBe(8);
    expect(exact.totalMs).toBe(99_305 * S);
    expect(exact.decide(8, { kind: 'http', statusCode: 500 })).toEqual({ action: 'fail' });
  });

  it.each([
    [0, 4000],
    [1, 6000],
    [0.25, 4500],
  ])('jitters ±20 %%: random %d gives %d ms for a 5 s step', (r, ms) => {
    expect(new RetryPolicy(SCHEDULE, () => r).decide(1, { kind: 'network' })).toEqual({ action: 'retry', delayMs: ms });
  });

  it.each<[number, string | null, number]>([
    [429, '120', 120 * S],
    [503, '120', 120 * S],
    [429, '1', 5 * S], // a shorter Retry-After never shortens the schedule
    [429, 'Sun, 22 Nov 2026 13:00:00 GMT', 3600 * S],
    [429, '999999', 24 * 3600 * S], // capped at 24 h
    [429, 'soon', 5 * S],
    [429, '-5', 5 * S],
    [500, '120', 5 * S], // only 429 and 503 carry a meaningful Retry-After here
  ])('status %i with Retry-After %p waits %i ms', (statusCode, retryAfter, ms) => {
    expect(exact.decide(1, { kind: 'http', statusCode, retryAfter })).toEqual({ action: 'retry', delayMs: ms });
  });
});

describe('parseRetryAfter', () => {
  it.each<[string | null, number | null]>([
    ['0', 0],
    ['30', 30000],
    ['Sun, 22 Nov 2026 12:00:30 GMT', 30000],
    ['Sun, 22 Nov 2026 11:00:00 GMT', 0],
    ['', null],
    [null, null],
    ['1.5', null],
    ['tomorrow', null],
  ])('%p → %p', (value, ms) => {
    expect(parseRetryAfter(value, NOW)).toBe(ms);
  });
});
