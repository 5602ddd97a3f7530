import {
  currentTraceparent,
  formatTraceparent,
  inAttemptSpan,
  logTraceIds,
  parseTraceparent,
  untraced,
} from './trace-context.js';

describe('traceparent', () => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const spanId = '00f067aa0ba902b7';

  it('formats and parses W3C version 00', () => {
    expect(formatTraceparent(traceId, spanId, 1)).toBe(`00-${traceId}-${spanId}-01`);
    expect(formatTraceparent(traceId, spanId, 0)).toBe(`00-${traceId}-${spanId}-00`);
    expect(parseTraceparent(`00-${traceId}-${spanId}-01`)).toEqual({ traceId, spanId, traceFlags: 1 });
  });

  it.each([
    null,
    '',
    `01-${traceId}-${spanId}-01`,
    `00-${traceId.toUpperCase()}-${spanId}-01`,
    `00-${'0'.repeat(32)}-${spanId}-01`,
    `00-${traceId}-${'0'.repeat(16)}-01`,
    `00-${traceId}-${spanId}-1`,
    `00-${traceId}-${spanId}-01-extra`,
  ])('refuses %p', (value) => {
    expect(parseTraceparent(value)).toBeNull();
  });
});

describe('tracing off (no hooks installed)', () => {
  it('records no context and runs work as it is', async () => {
    expect(currentTraceparent()).toBeNull();
    expect(logTraceIds()).toBeNull();
    expect(untraced(() => 7)).toBe(7);
    const ended: unknown[] = [];
    await expect(
      inAttemptSpan(null, { callbackId: 'c', message: 0, destination: 'http://x', attempt: 1 }, (span) => {
        span.end({ kind: 'http', statusCode: 200, error: null, status: 'delivered' });
        ended.push(1);
        return Promise.resolve('sent');
      }),
    ).resolves.toBe('sent');
    expect(ended).toEqual([1]);
  });
});
