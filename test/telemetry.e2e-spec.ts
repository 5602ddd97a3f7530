import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { Client } from 'pg';
import { OtlpReceiver, ReceivedSpan } from './support/otlp-receiver.js';
import { buildService, startService, stop } from './support/processes.js';
import { Receiver } from './support/receiver.js';
import { ADMIN_TOKEN, dropRunData, runIdentity, TEST_REDIS_URL } from './support/run-identity.js';
import { until } from './support/until.js';

// Traces and logs of the built service, run as `npm start` runs it: an API process and worker
// processes as children (ROLE=api, ROLE=worker), exporting to an OTLP receiver on loopback
// (OTEL_EXPORTER_OTLP_PROTOCOL=http/json), their stdout read line by line (docs/operations.md,
// "Traces" and "Logs").

type Service = Awaited<ReturnType<typeof startService>>;

const ROOT = path.resolve(__dirname, '..');
/** Header names of the trace-context propagators there are (W3C, B3, Jaeger, OpenTracing). */
const TRACE_HEADER =
  /^(traceparent|tracestate|baggage|b3|x-b3-.*|uber-trace-id|uberctx-.*|ot-tracer-.*|sentry-trace)$/i;
const QUERY_SECRET = 'query-secret-value-4821';
const WRONG_ADMIN_TOKEN = 'wrong-admin-token-0123456789';
const WRONG_API_KEY = 'fsk_wrongPartnerKey0123456789abcdef';

beforeAll(() => buildService(), 180_000);

/** Every stdout line: JSON with the contract's fields, no terminal code. Returns the parsed lines. */
function jsonLines(s: Service): Record<string, unknown>[] {
  const text = s.out.join('');
  expect(text).not.toContain('\u001b');
  const lines = text.split('\n').filter((l) => l !== '');
  expect(lines.length).toBeGreaterThan(0);
  return lines.map((line) => {
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new Error(`a stdout line is not JSON: ${line}`);
    }
    expect(parsed).toEqual(
      expect.objectContaining({ level: expect.any(String), context: expect.any(String), msg: expect.any(String) }),
    );
    const time = String(parsed.time);
    expect(`${time}: ${new Date(time).toISOString() === time}`).toBe(`${time}: true`);
    return parsed;
  });
}

describe('a change traced from its API request to every attempt of its callback, across a worker restart', () => {
  const run = runIdentity();
  const base = {
    DATABASE_URL: run.databaseUrl,
    REDIS_URL: TEST_REDIS_URL,
    QUEUE_PREFIX: run.queuePrefix,
    ADMIN_TOKEN,
    PORT: '0',
    CALLBACK_ALLOW_HTTP: 'true',
    CALLBACK_ALLOW_PRIVATE_TARGETS: 'true',
    // Its total (31 s) is how long the callback may wait on its open destination: longer than a worker's restart.
    CALLBACK_RETRY_SCHEDULE: '1s,30s',
    // The first failure opens the circuit, and that warning is written inside the attempt.
    CALLBACK_BREAKER_THRESHOLD: '1',
    CALLBACK_BREAKER_PROBE: '1s..1s',
  };
  let otlp: OtlpReceiver;
  let rx: Receiver;
  let db: Client;
  const services: Service[] = [];

  beforeAll(async () => {
    otlp = await OtlpReceiver.start();
    rx = await Receiver.start();
    db = new Client({ connectionString: run.databaseUrl });
  });

  afterAll(async () => {
    for (const s of services) await stop(s, 'SIGKILL').catch(() => undefined);
    await db.end().catch(() => undefined);
    await rx.close();
    await otlp.close();
    await dropRunData({ ...run, redisUrl: TEST_REDIS_URL });
  });

  const start = async (role: 'api' | 'worker') => {
    const s = await startService({
      ...base,
      ROLE: role,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    services.push(s);
    return s;
  };

  it('one trace: the request span is the root, each attempt (503 in one worker, 204 in the next) a span under it, PostgreSQL beneath; no trace header to the partner; JSON logs without secrets', async () => {
    const api = await start('api');
    const apiUrl = `http://127.0.0.1:${/port=(\d+)/.exec(api.out.join(''))![1]}`;
    const call = async (method: string, url: string, auth: string, body?: object) => {
      const res = await fetch(`${apiUrl}${url}`, {
        method,
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: body && JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, string> };
    };
    const worker1 = await start('worker');
    await db.connect();

    // Auth failures, with credentials that must not reach any log line.
    expect((await call('GET', '/admin/v1/callbacks', `Bearer ${WRONG_ADMIN_TOKEN}`)).status).toBe(401);
    expect((await call('GET', '/v1/callbacks/destinations', `Bearer ${WRONG_API_KEY}`)).status).toBe(401);
    expect(
      (await call('GET', '/admin/queues', `Basic ${Buffer.from(`admin:${WRONG_ADMIN_TOKEN}`).toString('base64')}`))
        .status,
    ).toBe(401);

    const partner = await call('POST', '/admin/v1/partners', `Bearer ${ADMIN_TOKEN}`, { name: 'Traced Bank' });
    expect(partner.status).toBe(201);
    const company = await call('POST', '/v1/companies', `Bearer ${partner.body.apiKey}`, {
      name: 'T',
      status_callback: rx.url(`/hook?token=${QUERY_SECRET}`),
    });
    expect(company.status).toBe(201);
    // A portal link's token in spellings of the query Fastify reads as it: the page answers; no span holds it.
    const link = await call('POST', '/v1/partner/portal-links', `Bearer ${partner.body.apiKey}`, {});
    const linkToken = new URL(link.body.url).searchParams.get('token')!;
    const encoded = [...linkToken].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('');
    for (const query of [
      `tok%65n=${linkToken}`,
      `token[]=${linkToken}`,
      `token=x&token=${linkToken}`,
      `next=${encoded}`,
    ]) {
      expect((await fetch(`${apiUrl}/portal/login?${query}`)).status).toBeLessThan(500);
    }

    rx.answer = (_hit, _req, res) => res.writeHead(rx.hits.length === 1 ? 503 : 204).end();
    const change = await call('PATCH', `/admin/v1/companies/${company.body.id}/credit`, `Bearer ${ADMIN_TOKEN}`, {
      repaymentTermDays: 45,
    });
    expect(change.status).toBe(200);

    // The change's trace, stored with its callback in the same insert.
    const [row] = (
      await db.query<{ id: string; trace_parent: string }>(
        'SELECT id, trace_parent FROM callbacks WHERE company_id = $1',
        [company.body.id],
      )
    ).rows;
    const [, traceId, requestSpanId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(row.trace_parent) ?? [];
    expect(`${row.trace_parent}: ${traceId !== undefined}`).toBe(`${row.trace_parent}: true`);

    // The first attempt fails in the first worker; that worker stops (SIGTERM) and another starts.
    await until(
      async () => (await db.query('SELECT 1 FROM callback_attempts WHERE callback_id = $1', [row.id])).rowCount === 1,
      { timeoutMs: 15_000, what: 'the first attempt recorded' },
    );
    expect(await stop(worker1, 'SIGTERM')).toBe(0);
    const worker2 = await start('worker');
    await until(
      async () =>
        (await db.query<{ status: string }>('SELECT status FROM callbacks WHERE id = $1', [row.id])).rows[0].status ===
        'delivered',
      {
        timeoutMs: 20_000,
        what: 'the second attempt to deliver',
      },
    );
    expect(rx.hits.map((h) => h.path)).toEqual([`/hook?token=${QUERY_SECRET}`, `/hook?token=${QUERY_SECRET}`]);
    // The trace context is not sent to partners.
    for (const hit of rx.hits) expect(Object.keys(hit.headers).filter((h) => TRACE_HEADER.test(h))).toEqual([]);

    // Stopping flushes what each process still holds.
    expect(await stop(worker2, 'SIGTERM')).toBe(0);
    expect(await stop(api, 'SIGTERM')).toBe(0);
    const trace = () => otlp.spans.filter((s) => s.traceId === traceId);
    const attempts = () => trace().filter((s) => s.name === 'callback attempt');
    await until(() => attempts().length === 2 && trace().some((s) => s.spanId === requestSpanId), {
      timeoutMs: 10_000,
      what: 'the spans exported',
    });

    const root = trace().find((s) => s.spanId === requestSpanId)!;
    expect(root).toEqual(
      expect.objectContaining({
        name: 'PATCH /admin/v1/companies/:companyId/credit',
        parentSpanId: null,
        kind: 2,
        scope: '@opentelemetry/instrumentation-http',
      }),
    );
    expect(root.attributes['http.route']).toBe('/admin/v1/companies/:companyId/credit');
    expect(root.attributes['url.path']).toBe(`/admin/v1/companies/${company.body.id}/credit`);
    expect(root.resource['process.pid']).toBe(api.pid);

    const [first, second] = attempts().sort(
      (a, b) => Number(a.attributes['funding.callback.attempt']) - Number(b.attributes['funding.callback.attempt']),
    );
    const destination = `http://127.0.0.1:${rx.port}`;
    expect(first).toEqual(
      expect.objectContaining({
        parentSpanId: requestSpanId,
        kind: 3,
        attributes: {
          'funding.callback.id': row.id,
          'funding.callback.message': 0,
          'funding.callback.destination': destination,
          'funding.callback.attempt': 1,
          'http.response.status_code': 503,
          'funding.callback.status': 'pending',
          'error.type': '503',
        },
        status: expect.objectContaining({ code: 2, message: 'HTTP 503' }),
      }),
    );
    expect(second).toEqual(
      expect.objectContaining({
        parentSpanId: requestSpanId,
        attributes: {
          'funding.callback.id': row.id,
          'funding.callback.message': 0,
          'funding.callback.destination': destination,
          'funding.callback.attempt': 2,
          'http.response.status_code': 204,
          'funding.callback.status': 'delivered',
        },
      }),
    );
    // Each in its own worker process, neither in the API's.
    expect([first.resource['process.pid'], second.resource['process.pid']]).toEqual([worker1.pid, worker2.pid]);

    // PostgreSQL beneath the request (the change and its callback) and beneath each attempt (its record).
    const pgUnder = (span: ReceivedSpan) =>
      otlp
        .childrenOf(span.spanId)
        .filter((s) => s.scope === '@opentelemetry/instrumentation-pg' && s.name.startsWith('pg.query'));
    expect(
      pgUnder(root)
        .map((s) => s.attributes['db.query.text'])
        .join('\n'),
    ).toMatch(/INSERT INTO callbacks/);
    expect(
      pgUnder(first)
        .map((s) => s.name)
        .join('\n'),
    ).toMatch(/^pg\.query:settlement-record\S* /m);
    expect(
      pgUnder(second)
        .map((s) => s.name)
        .join('\n'),
    ).toMatch(/^pg\.query:settlement-record\S* /m);
    // Redis beneath the partner's request (its rate limit), in that request's own trace.
    const companyRequest = otlp.spans.find(
      (s) =>
        s.kind === 2 &&
        s.attributes['url.path'] === '/v1/companies' &&
        s.attributes['http.response.status_code'] === 201,
    )!;
    expect(
      otlp.childrenOf(companyRequest.spanId).filter((s) => s.scope === '@opentelemetry/instrumentation-ioredis').length,
    ).toBeGreaterThan(0);
    // Probes and scrapes are not traced; nothing but traces is exported.
    expect(
      otlp.spans.filter(
        (s) => s.kind === 2 && ['/health', '/ready', '/metrics'].includes(String(s.attributes['url.path'])),
      ),
    ).toEqual([]);
    expect(otlp.unexpected).toEqual([]);
    // No span holds the callback URL's query string, nor a portal link's token.
    expect(JSON.stringify(otlp.spans)).not.toContain(QUERY_SECRET);
    expect(JSON.stringify(otlp.spans)).not.toContain(linkToken.slice(4));
    expect(JSON.stringify(otlp.spans)).not.toContain(encoded.slice(12));

    // Logs: every line of every process is JSON, none holds a secret, and the warning written
    // inside the first attempt (the circuit opening) carries that attempt's trace and span.
    const lines = [api, worker1, worker2].flatMap(jsonLines);
    const all = [api, worker1, worker2].map((s) => s.output.join('')).join('\n');
    const secrets = [
      ADMIN_TOKEN,
      WRONG_ADMIN_TOKEN,
      WRONG_API_KEY,
      partner.body.apiKey,
      partner.body.signingSecret,
      QUERY_SECRET,
    ];
    for (const secret of [...secrets, linkToken.slice(4)]) {
      expect(`${secret}: ${all.includes(secret)}`).toBe(`${secret}: false`);
    }
    expect(api.err.join('') + worker1.err.join('') + worker2.err.join('')).toBe('');
    const opened = lines.find((l) => String(l.msg).startsWith('circuit opened'));
    expect(opened).toEqual(
      expect.objectContaining({ level: 'warn', context: 'Destinations', trace_id: traceId, span_id: first.spanId }),
    );
    // Lines written outside a traced request or delivery carry no trace.
    expect(lines.find((l) => String(l.msg).startsWith('funding-service ready'))).not.toHaveProperty('trace_id');
  }, 120_000);
});

describe('tracing off', () => {
  it('loads no OpenTelemetry module unless an OTLP endpoint is set', () => {
    const loaded = (env: Record<string, string>) =>
      execFileSync(
        process.execPath,
        [
          '-e',
          "require('./dist/src/platform/telemetry/tracing.js'); process.stdout.write(String(Object.keys(require.cache).filter((k) => k.includes('@opentelemetry')).length))",
        ],
        { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env } },
      ).toString();
    expect(loaded({})).toBe('0');
    expect(loaded({ OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toBe('0');
    expect(Number(loaded({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:9/v1/traces' }))).toBeGreaterThan(0);
    expect(loaded({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_SDK_DISABLED: 'true' })).toBe('0');
  });
});

describe('LOG_FORMAT', () => {
  const run = runIdentity();
  const env = {
    ROLE: 'worker',
    PORT: '0',
    DATABASE_URL: run.databaseUrl,
    REDIS_URL: TEST_REDIS_URL,
    QUEUE_PREFIX: run.queuePrefix,
    ADMIN_TOKEN,
  };
  afterAll(() => dropRunData({ ...run, redisUrl: TEST_REDIS_URL }));

  it('text: lines for people, without colour codes off a terminal', async () => {
    const s = await startService({ ...env, LOG_FORMAT: 'text' });
    try {
      expect(s.out.join('')).toMatch(/LOG \[funding-service\] funding-service ready: role=worker/);
      expect(s.output.join('')).not.toContain('\u001b');
    } finally {
      await stop(s, 'SIGTERM');
    }
  }, 60_000);

  it('an invalid value stops the start, naming the variable (as a JSON line)', async () => {
    const failed = await startService({ ...env, LOG_FORMAT: 'pretty' }).then(
      () => null,
      (e: Error) => e.message,
    );
    expect(failed).toMatch(/exited with 1 before ready/);
    const line = JSON.parse(failed!.slice(failed!.indexOf('{')).trim());
    expect(line).toEqual(
      expect.objectContaining({
        level: 'error',
        msg: expect.stringContaining('LOG_FORMAT: must be json or text, got "pretty"'),
      }),
    );
  }, 60_000);
});
