import { installTraceHooks } from '../telemetry/trace-context.js';
import { RedactingLogger } from './redacting-logger.js';

/** What the logger writes to stdout (and to stderr: nothing) while `fn` runs. */
function capture(fn: () => void): { out: string; err: string } {
  const out: string[] = [];
  const err: string[] = [];
  const o = jest.spyOn(process.stdout, 'write').mockImplementation((s) => out.push(String(s)) > 0);
  const e = jest.spyOn(process.stderr, 'write').mockImplementation((s) => err.push(String(s)) > 0);
  try {
    fn();
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
  return { out: out.join(''), err: err.join('') };
}

describe('RedactingLogger, json', () => {
  afterEach(() => installTraceHooks(null));

  it('one object a line on stdout: time, level, context, msg; errors too, with their stack', () => {
    const log = new RedactingLogger('json', ['error', 'warn']);
    const { out, err } = capture(() => {
      log.warn('circuit opened', 'Destinations');
      log.error('boom', 'Error: boom\n    at x', 'UnexpectedError');
      log.log('not enabled', 'Nest');
    });
    expect(err).toBe('');
    const lines = out
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      { time: expect.any(String), level: 'warn', context: 'Destinations', msg: 'circuit opened' },
      {
        time: expect.any(String),
        level: 'error',
        context: 'UnexpectedError',
        msg: 'boom',
        stack: 'Error: boom\n    at x',
      },
    ]);
    for (const l of lines) expect(new Date(l.time).toISOString()).toBe(l.time);
    expect(out).not.toContain('\u001b');
  });

  it('carries trace_id and span_id while a span is active, and nothing of the sort otherwise', () => {
    const log = new RedactingLogger('json', ['warn']);
    let ids: { trace_id: string; span_id: string } | null = null;
    installTraceHooks({
      logIds: () => ids,
      traceparent: () => null,
      attempt: (_p, _a, fn) => fn({ end: () => undefined }),
      untraced: (fn) => fn(),
      nameServerSpan: () => undefined,
    });
    const outside = JSON.parse(capture(() => log.warn('outside', 'X')).out);
    ids = { trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', span_id: '00f067aa0ba902b7' };
    const inside = JSON.parse(capture(() => log.warn('inside', 'X')).out);
    expect(outside).not.toHaveProperty('trace_id');
    expect(inside).toEqual(expect.objectContaining({ msg: 'inside', trace_id: ids.trace_id, span_id: ids.span_id }));
  });

  it('redacts secrets and query strings wherever they are in the line', () => {
    const log = new RedactingLogger('json', ['error']);
    const { out } = capture(() =>
      log.error(
        'refused Bearer abc.def for https://x.example/h?token=s3cret with fsk_KEY123',
        'Error: at https://x.example/h?token=s3cret',
        'X',
      ),
    );
    expect(out).not.toMatch(/abc\.def|s3cret|fsk_KEY123/);
    expect(JSON.parse(out).msg).toBe(
      'refused Bearer [redacted] for https://x.example/h?[redacted] with fsk_[redacted]',
    );
  });

  it("never writes a portal link's token or session cookie, in a path without its origin or bare", () => {
    const log = new RedactingLogger('json', ['error']);
    const { out } = capture(() =>
      log.error(
        'GET /portal/login?token=fsp_AbC-1 then /PORTAL/login?x=1&TOKEN=anything; cookie fss_Xy-9',
        undefined,
        'X',
      ),
    );
    expect(out).not.toMatch(/AbC-1|anything|Xy-9/);
    expect(JSON.parse(out).msg).toBe(
      'GET /portal/login?[redacted] then /PORTAL/login?[redacted] cookie fss_[redacted]',
    );
  });

  it("the service's own lines whatever the enabled levels", () => {
    const log = new RedactingLogger('json', []);
    const line = JSON.parse(capture(() => log.line('log', 'funding-service ready: role=all')).out);
    expect(line).toEqual({
      time: expect.any(String),
      level: 'log',
      context: 'funding-service',
      msg: 'funding-service ready: role=all',
    });
  });
});

describe('RedactingLogger, text', () => {
  it('no colour codes off a terminal, every level on stdout, redacted', () => {
    const was = process.stdout.isTTY;
    process.stdout.isTTY = false;
    try {
      const log = new RedactingLogger('text', ['error', 'warn']);
      const { out, err } = capture(() => log.error('failed with Bearer abc.def', 'Error: x', 'X'));
      expect(err).toBe('');
      expect(out).toMatch(/ERROR \[X\] failed with Bearer \[redacted\]\nError: x\n$/);
      expect(out).not.toContain('\u001b');
    } finally {
      process.stdout.isTTY = was;
    }
  });
});
