import { answerHead, HEADER_COUNT_LIMIT, HEADER_VALUE_LIMIT, HEADERS_TOTAL_LIMIT, WITHHELD } from './answer-headers.js';

const res = (rawHeaders: string[], statusMessage = 'Internal Server Error') => ({
  httpVersion: '1.1',
  statusCode: 500,
  statusMessage,
  rawHeaders,
});

describe('answerHead: what the attempt log keeps of an answer', () => {
  it('keeps the status line and the headers in order, names as sent', () => {
    expect(answerHead(res(['Content-Type', 'text/plain', 'X-Trace', 'a', 'X-Trace', 'b']))).toEqual({
      status: 'HTTP/1.1 500 Internal Server Error',
      headers: [
        ['Content-Type', 'text/plain'],
        ['X-Trace', 'a'],
        ['X-Trace', 'b'],
      ],
    });
  });

  it('bounds the count, each value and the total', () => {
    const many = Array.from({ length: 100 }, (_, i) => [`h${i}`, 'v']).flat();
    expect(answerHead(res(many)).headers).toHaveLength(HEADER_COUNT_LIMIT);
    const long = answerHead(res(['x', 'v'.repeat(5000)])).headers;
    expect(long[0][1]).toHaveLength(HEADER_VALUE_LIMIT);
    const wide = Array.from({ length: 30 }, (_, i) => [`h${i}`, 'v'.repeat(200)]).flat();
    const kept = answerHead(res(wide)).headers;
    expect(kept.reduce((n, [k, v]) => n + k.length + v.length, 0)).toBeLessThanOrEqual(HEADERS_TOTAL_LIMIT);
    expect(kept.length).toBeLessThan(30);
  });

  it('turns control characters into U+FFFD, so any answer can be stored', () => {
    expect(answerHead(res(['x', 'a\u0000b'], 'Bad\u0001')).headers[0][1]).toBe('a\ufffdb');
    expect(answerHead(res([], 'Bad\u0001')).status).toBe('HTTP/1.1 500 Bad\ufffd');
  });

  it("keeps a cookie's or a credential's name, never its value", () => {
    const kept = answerHead(res(['Set-Cookie', 'sid=s3cret', 'authorization', 'Bearer t0ken', 'X-Id', '7'])).headers;
    expect(kept).toEqual([
      ['Set-Cookie', WITHHELD],
      ['authorization', WITHHELD],
      ['X-Id', '7'],
    ]);
  });
});
