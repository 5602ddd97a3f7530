import fc from 'fast-check';
import request from 'supertest';
import { ADMIN_TOKEN, harness, Partner, TestApp } from './support/harness.js';

/**
 * Random and mutated requests against every route: never a 5xx, and a 4xx leaves every table as
 * it was. Seeded and bounded, so a failure reproduces and the suite stays well under 30 s.
 */
const SEED = 20261123;
const RUNS = { bodies: 80, paths: 60, queries: 50, raw: 50 };
const TABLES = [
  'partners',
  'companies',
  'limit_requests',
  'withdrawal_requests',
  'loans',
  'loan_payments',
  'callbacks',
  'callback_attempts',
  'idempotency_keys',
];

type Method = 'get' | 'post' | 'patch' | 'put';
interface Route {
  method: Method;
  /** `{c}`-style placeholders, filled with real ids or fuzzed segments. */
  path: string;
  auth: 'partner' | 'admin' | 'none';
  body?: Record<string, unknown>;
  /** The other variant's path: not in this deployment's document. */
  elsewhere?: boolean;
}

/** Values that have broken services before: NUL, lone surrogates, huge, control characters, numbers as text, wrong types. */
const NASTY: unknown[] = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udc00x',
  '\u202e',
  '\\',
  ' ',
  '',
  '0x10',
  '1e400',
  '-0',
  'NaN',
  '99999999999999999999999',
  'null',
  '__proto__',
  'constructor',
  'x'.repeat(70_000 / 2),
  '1'.repeat(40),
  '0.001',
  '１２',
  '2026-02-30T00:00:00Z',
  '+275760-09-13T00:00:00Z',
  '-000001-01-01T00:00:00Z',
  0,
  -1,
  1e308,
  1.5,
  true,
  null,
  [],
  {},
  ['x'],
  { a: 1 },
];
const nasty = fc.oneof(
  fc.constantFrom(...NASTY),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ maxLength: 5000 }),
  fc.constantFrom(
    'https://10.0.0.1/',
    'http://127.0.0.1:9/x',
    'https://[::1]/',
    ' https://a.example/ ',
    'https://a.example:25/',
    `https://a.example/${'x'.repeat(3000)}`,
  ),
);
const value: fc.Arbitrary<unknown> = fc.oneof(
  nasty,
  fc.jsonValue({ maxDepth: 3 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
);

/** A valid body with some properties replaced, removed or added. */
function mutated(body: Record<string, unknown>): fc.Arbitrary<unknown> {
  const keys = Object.keys(body);
  const one = keys.length ? [fc.constantFrom(...keys).chain((k) => nasty.map((v) => ({ ...body, [k]: v })))] : [];
  return fc.oneof(
    // One property at a time: the rest valid, so the bad value travels as far as it can.
    ...one,
    fc
      .record({
        replace: fc.subarray(keys),
        remove: fc.subarray(keys),
        extra: fc.dictionary(
          fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('__proto__', 'a\u0000', '\ud800')),
          value,
          { maxKeys: 2 },
        ),
        values: fc.array(value, { minLength: keys.length, maxLength: keys.length }),
      })
      .map(({ replace, remove, extra, values }) => {
        const out: Record<string, unknown> = { ...body };
        replace.forEach((k) => (out[k] = values[keys.indexOf(k)]));
        remove.forEach((k) => delete out[k]);
        for (const [k, v] of Object.entries(extra))
          Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
        return out;
      }),
    fc.jsonValue({ maxDepth: 4 }),
  );
}

/** Percent-encoding that also takes lone surrogates, as the bytes a careless client sends for them (ED A0 80 …). */
function pct(s: string): string {
  return [...s]
    .map((ch) => {
      const u = ch.charCodeAt(0);
      if (ch.length === 1 && u >= 0xd800 && u <= 0xdfff)
        return `%${(0xe0 | (u >> 12)).toString(16)}%${(0x80 | ((u >> 6) & 0x3f)).toString(16)}%${(0x80 | (u & 0x3f)).toString(16)}`.toUpperCase();
      return encodeURIComponent(ch);
    })
    .join('');
}

const segment = (real: string) =>
  fc.oneof(
    fc.constant(real),
    fc.uuid(),
    fc.constantFrom(
      '%',
      '%E0%A4%A',
      '%00',
      '..',
      '.',
      'null',
      real.toUpperCase(),
      `${real}0`,
      '00000000-0000-0000-0000-000000000000',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
    ),
    fc.string({ minLength: 1, maxLength: 60 }).map(pct),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 10 }).map(pct),
  );

describe.each(['A', 'B'] as const)('fuzzing every route, variant %s', (variant) => {
  let t: TestApp;
  let p: Partner;
  let routes: Route[];
  let ids: Record<string, string>;
  const ownProp = variant === 'A' ? 'callback' : 'status_callback';
  const counts = async () =>
    (await t.sql(`SELECT ${TABLES.map((x) => `(SELECT count(*)::int FROM ${x}) AS ${x}`).join(', ')}`))[0];

  const e2e = harness({ API_VARIANT: variant, ROLE: 'api' });
  beforeAll(async () => {
    ({ t, p } = e2e);
    const wSeg = variant === 'A' ? 'withdrawal-requests' : 'withdrawal';
    const c = (
      await t.as(p.apiKey, 'post', '/v1/companies', { name: 'Fuzz', [ownProp]: 'http://127.0.0.1:9/c' }).expect(201)
    ).body.id;
    const l = (await t.as(p.apiKey, 'post', `/v1/companies/${c}/limit-requests`, { amount: '100000' }).expect(201)).body
      .id;
    await t.admin('post', `/admin/v1/limit-requests/${l}/approve`).expect(200);
    const w = (await t.as(p.apiKey, 'post', `/v1/companies/${c}/${wSeg}`, { amount: '100' }).expect(201)).body.id;
    await t.admin('post', `/admin/v1/withdrawal-requests/${w}/accept`).expect(200);
    const loan = (await t.admin('post', `/admin/v1/withdrawal-requests/${w}/pay-out`).expect(200)).body.loanId;
    const [{ id: cb }] = await t.sql<{ id: string }>('SELECT id FROM callbacks LIMIT 1');
    ids = { c, l, w, loan, cb, partner: p.id };
    const url = 'http://127.0.0.1:9/x';
    routes = [
      {
        method: 'post',
        path: '/v1/companies',
        auth: 'partner',
        body: { name: 'N', registrationNumber: '1', currency: 'EUR', [ownProp]: url },
      },
      { method: 'get', path: '/v1/companies/{c}', auth: 'partner' },
      { method: 'get', path: '/v1/companies/{c}/status', auth: 'partner' },
      { method: 'get', path: '/v1/companies/{c}/terms', auth: 'partner' },
      {
        method: 'post',
        path: '/v1/companies/{c}/limit-requests',
        auth: 'partner',
        body: { amount: '10', status_callback: url },
      },
      { method: 'get', path: '/v1/companies/{c}/limit-requests/{l}', auth: 'partner' },
      { method: 'get', path: '/v1/companies/{c}/limit-requests/{l}/status', auth: 'partner' },
      { method: 'post', path: '/v1/companies/{c}/limit-requests/{l}/cancel', auth: 'partner' },
      { method: 'patch', path: '/v1/companies/{c}', auth: 'partner', body: { [ownProp]: url } },
      {
        method: 'patch',
        path: '/v1/companies/{c}/limit-requests/{l}',
        auth: 'partner',
        body: { status_callback: url },
      },
      // Both variants' withdrawal paths: the other variant's answers 404.
      ...['withdrawal-requests', 'withdrawal'].flatMap((seg): Route[] => {
        const elsewhere = seg !== wSeg;
        return [
          {
            method: 'post',
            path: `/v1/companies/{c}/${seg}`,
            auth: 'partner',
            body: { amount: '1', status_callback: url, loan_status_callback: url },
            elsewhere,
          },
          { method: 'get', path: `/v1/companies/{c}/${seg}/{w}`, auth: 'partner', elsewhere },
          { method: 'get', path: `/v1/companies/{c}/${seg}/{w}/status`, auth: 'partner', elsewhere },
          { method: 'post', path: `/v1/companies/{c}/${seg}/{w}/cancel`, auth: 'partner', elsewhere },
          {
            method: 'patch',
            path: `/v1/companies/{c}/${seg}/{w}`,
            auth: 'partner',
            body: { status_callback: url, loan_status_callback: null },
            elsewhere,
          },
        ];
      }),
      { method: 'get', path: '/v1/companies/{c}/loans/{loan}', auth: 'partner' },
      { method: 'get', path: '/v1/callbacks/source-ips', auth: 'none' },
      { method: 'post', path: '/admin/v1/partners', auth: 'admin', body: { name: 'P' } },
      { method: 'post', path: '/admin/v1/partners/{partner}/rotate-signing-secret', auth: 'admin' },
      {
        method: 'post',
        path: '/admin/v1/partners/{partner}/signature-scheme',
        auth: 'admin',
        body: { scheme: 'ed25519' },
      },
      {
        method: 'put',
        path: '/admin/v1/partners/{partner}/client-certificate',
        auth: 'admin',
        body: {
          certificate: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----',
          privateKey: 'k',
          serverCa: 'c',
        },
      },
      { method: 'get', path: '/admin/v1/partners', auth: 'admin' },
      { method: 'get', path: '/admin/v1/partners/{partner}', auth: 'admin' },
      { method: 'get', path: '/v1/partner', auth: 'partner' },
      { method: 'patch', path: '/v1/partner', auth: 'partner', body: { operationsUrl: url } },
      { method: 'post', path: '/v1/partner/rotate-signing-secret', auth: 'partner' },
      { method: 'post', path: '/v1/partner/signature-scheme', auth: 'partner', body: { scheme: 'ed25519' } },
      { method: 'get', path: '/v1/callback-urls', auth: 'partner' },
      {
        method: 'post',
        path: '/v1/callback-urls/move',
        auth: 'partner',
        body: { from: 'http://127.0.0.1:9/c', to: url },
      },
      {
        method: 'patch',
        path: '/admin/v1/companies/{c}/credit',
        auth: 'admin',
        body: { creditLimit: '100000', creditStatus: 'active', annualInterestRate: '7.50', repaymentTermDays: 30 },
      },
      { method: 'post', path: '/admin/v1/limit-requests/{l}/approve', auth: 'admin' },
      { method: 'post', path: '/admin/v1/limit-requests/{l}/reject', auth: 'admin' },
      { method: 'post', path: '/admin/v1/withdrawal-requests/{w}/accept', auth: 'admin' },
      { method: 'post', path: '/admin/v1/withdrawal-requests/{w}/reject', auth: 'admin' },
      { method: 'post', path: '/admin/v1/withdrawal-requests/{w}/pay-out', auth: 'admin' },
      {
        method: 'post',
        path: '/admin/v1/loans/{loan}/payments',
        auth: 'admin',
        body: { amount: '0.01', paidAt: '2026-11-22T10:00:00Z' },
      },
      { method: 'get', path: '/admin/v1/callbacks', auth: 'admin' },
      { method: 'get', path: '/admin/v1/callbacks/{cb}', auth: 'admin' },
      { method: 'post', path: '/admin/v1/callbacks/{cb}/redeliver', auth: 'admin' },
      {
        method: 'post',
        path: '/admin/v1/callbacks/redeliver',
        auth: 'admin',
        body: {
          status: 'failed',
          since: '2026-11-22T00:00:00Z',
          until: '2026-11-23T00:00:00Z',
          partnerId: p.id,
          companyId: c,
          destination: 'http://127.0.0.1:9',
        },
      },
      {
        method: 'post',
        path: '/v1/callbacks/redeliver',
        auth: 'partner',
        body: {
          status: 'failed',
          since: '2026-11-22T00:00:00Z',
          until: '2026-11-23T00:00:00Z',
          destination: 'http://127.0.0.1:9',
        },
      },
      { method: 'get', path: '/v1/callbacks', auth: 'partner' },
      { method: 'get', path: '/v1/callbacks/{cb}', auth: 'partner' },
      { method: 'post', path: '/v1/callbacks/{cb}/redeliver', auth: 'partner' },
      { method: 'get', path: '/v1/callbacks/destinations', auth: 'partner' },
      { method: 'get', path: '/v1/callbacks/feed', auth: 'partner' },
      { method: 'post', path: '/v1/callbacks/test', auth: 'partner', body: { companyId: c, url, message: 0 } },
      { method: 'get', path: '/admin/v1/destinations', auth: 'admin' },
      { method: 'post', path: '/admin/v1/destinations/probe', auth: 'admin', body: { origin: 'http://127.0.0.1:9' } },
      { method: 'get', path: '/health', auth: 'none' },
      { method: 'get', path: '/ready', auth: 'none' },
      { method: 'get', path: '/metrics', auth: 'none' },
      { method: 'get', path: '/docs-json', auth: 'none' },
      { method: 'get', path: '/docs/partners', auth: 'none' },
      { method: 'get', path: '/docs/partners/api-json', auth: 'none' },
    ];
  });

  /**
   * Sends one request; fails on a 5xx, or on a 4xx that changed any table's row count. A request
   * to a route of this deployment with its real ids is also checked against /docs-json; one to
   * the other variant's path or a mangled path is not (the document describes neither).
   */
  async function check(
    r: Route,
    path: string,
    body: string | undefined,
    headers: Record<string, string> = {},
    documented = !r.elsewhere,
  ): Promise<void> {
    const before = await counts();
    let req = documented ? t.http()[r.method](path) : request(t.app.getHttpServer())[r.method](path);
    if (r.auth === 'admin') req = req.set('Authorization', `Bearer ${ADMIN_TOKEN}`);
    if (r.auth === 'partner') req = req.set('Authorization', `Bearer ${p.apiKey}`);
    for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
    if (body !== undefined) req = req.set('Content-Type', headers['Content-Type'] ?? 'application/json').send(body);
    const res = await req;
    const what = `${r.method.toUpperCase()} ${path} ${body?.slice(0, 200) ?? ''} → ${res.status} ${res.text.slice(0, 300)}`;
    if (res.status >= 500) throw new Error(`5xx: ${what}`);
    if (res.status >= 400) {
      expect(Object.keys(res.body)).toEqual(expect.arrayContaining(['statusCode', 'error', 'message']));
      const after = await counts();
      if (JSON.stringify(after) !== JSON.stringify(before))
        throw new Error(
          `a ${res.status} stored something: ${what}\n${JSON.stringify(before)}\n${JSON.stringify(after)}`,
        );
    }
  }

  const fill = (template: string, pick: (name: string) => string) =>
    template.replace(/\{(\w+)\}/g, (_, name: string) => pick(name));
  const route = () => fc.constantFrom(...routes);

  it('random and mutated JSON bodies', async () => {
    const bodied = () => fc.constantFrom(...routes.filter((r) => r.method !== 'get'));
    await fc.assert(
      fc.asyncProperty(
        bodied().chain((r) =>
          fc.tuple(
            fc.constant(r),
            mutated(r.body ?? {}),
            fc.option(fc.string({ minLength: 1, maxLength: 20 }).map((s) => s.replace(/[^\x21-\x7e]/g, 'k'))),
          ),
        ),
        async ([r, body, key]) =>
          check(
            r,
            fill(r.path, (n) => ids[n]),
            JSON.stringify(body),
            key ? { 'Idempotency-Key': key } : {},
          ),
      ),
      { seed: SEED, numRuns: RUNS.bodies },
    );
  });

  it('each property of each body, with each value known to break services', async () => {
    for (const r of routes.filter((x) => x.body)) {
      for (const k of Object.keys(r.body!)) {
        for (const v of NASTY)
          await check(
            r,
            fill(r.path, (n) => ids[n]),
            JSON.stringify({ ...r.body, [k]: v }),
          );
      }
    }
    // About 1,500 requests, each with two counts of every table: some 45 s on a busy 2-core machine.
  }, 120_000);

  it('fuzzed path ids', async () => {
    await fc.assert(
      fc.asyncProperty(
        route(),
        fc.record(Object.fromEntries(Object.entries(ids).map(([k, v]) => [k, segment(v)]))),
        async (r, segs) =>
          check(
            r,
            fill(r.path, (n) => segs[n]),
            r.body ? JSON.stringify(r.body) : undefined,
            {},
            false,
          ),
      ),
      { seed: SEED, numRuns: RUNS.paths },
    );
  });

  it('fuzzed query strings', async () => {
    const param = fc.tuple(
      fc.oneof(
        fc.constantFrom(
          'status',
          'companyId',
          'message',
          'limit',
          'cursor',
          'state',
          'partnerId',
          'destination',
          'name',
        ),
        fc.string({ maxLength: 6 }),
      ),
      fc.oneof(
        nasty,
        fc.constantFrom(
          'failed',
          'pending',
          '0',
          '4',
          '200',
          '201',
          ids.c ?? '',
          Buffer.from('seq:1').toString('base64url'),
        ),
        fc.nat().map(String),
      ),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes.filter((r) => r.method === 'get')),
        fc.array(param, { maxLength: 4 }),
        async (r, params) => {
          const query = params.map(([k, v]) => `${pct(k)}=${pct(String(v))}`).join('&');
          await check(r, `${fill(r.path, (n) => ids[n])}?${query}`, undefined);
        },
      ),
      { seed: SEED, numRuns: RUNS.queries },
    );
  });

  it('raw bodies: broken JSON, deep nesting, odd content types', async () => {
    const text = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.nat({ max: 20000 }).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`),
      fc.nat({ max: 5000 }).map((n) => `{"name":${'{"a":'.repeat(n)}1${'}'.repeat(n)}}`),
      fc.constantFrom(
        '',
        'null',
        '[]',
        '"x"',
        '1',
        '{"name":"a"',
        '{"name":"\\u0000"}',
        '{"name":"\\ud800"}',
        '\ufeff{"name":"x"}',
      ),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes.filter((r) => r.method !== 'get')),
        text,
        fc.constantFrom(
          'application/json',
          'application/json; charset=latin1',
          'text/plain',
          'application/x-www-form-urlencoded',
          'application/merge-patch+json',
        ),
        async (r, body, type) =>
          check(
            r,
            fill(r.path, (n) => ids[n]),
            body,
            { 'Content-Type': type },
          ),
      ),
      { seed: SEED, numRuns: RUNS.raw },
    );
  });
});
