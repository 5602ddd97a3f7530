import { attemptLogLine, callbackJobName, destinationOrigin, withoutUrlPaths } from './delivery-journal';

describe('delivery journal (what the dashboard shows)', () => {
  it.each([
    ['https://partner.example/hooks/abc?token=s3cret', 'https://partner.example'],
    ['https://partner.example:8443/x', 'https://partner.example:8443'],
    ['http://user:pw@127.0.0.1:9000/cb#frag', 'http://127.0.0.1:9000'],
    ['https://[2001:db8::1]:444/p?q=1', 'https://[2001:db8::1]:444'],
    ['not a url', '(invalid URL)'],
  ])('names the destination of %s by its origin only: %s', (url, origin) => {
    expect(destinationOrigin(url)).toBe(origin);
  });

  it('names a job by message code and name, company and origin, never the path or query', () => {
    const name = callbackJobName({ message: 3, companyId: '6f1c9a52-0d7e-4c55-9d6f-2b2f0a1d9e11', destination: 'https://bank.example/cb/tok_123?key=abc' });
    expect(name).toBe('3 LimitRequestStatusChanged · company 6f1c9a52-0d7e-4c55-9d6f-2b2f0a1d9e11 · https://bank.example');
    expect(name).not.toMatch(/tok_123|key=abc/);
  });

  it('cuts any URL quoted in a message to its origin', () => {
    expect(withoutUrlPaths('invalid URL: https://a.example/secret/path?token=x then http://b.example:81/y')).toBe(
      'invalid URL: https://a.example then http://b.example:81',
    );
  });

  it.each([
    [{ number: 1, statusCode: 204, error: null, durationMs: 12, sourceAddress: '127.0.0.2', outcome: { action: 'delivered' as const } }, 'attempt 1: HTTP 204 in 12 ms from 127.0.0.2 → delivered'],
    [
      { number: 2, statusCode: 500, error: 'HTTP 500', durationMs: 40, sourceAddress: '20.93.102.228', outcome: { action: 'retry' as const, at: new Date('2026-11-23T10:00:05.000Z') } },
      'attempt 2: HTTP 500 in 40 ms from 20.93.102.228 → retry at 2026-11-23T10:00:05.000Z',
    ],
    [
      { number: 3, statusCode: null, error: 'timeout: no answer within 500 ms', durationMs: 501, sourceAddress: null, outcome: { action: 'fail' as const, reason: 'timeout: no answer within 500 ms (attempt schedule exhausted)' } },
      'attempt 3: timeout: no answer within 500 ms in 501 ms from unknown address → failed: timeout: no answer within 500 ms (attempt schedule exhausted)',
    ],
  ])('logs an attempt as one line', (entry, line) => {
    expect(attemptLogLine(entry)).toBe(line);
  });
});
