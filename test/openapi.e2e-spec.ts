import { ERROR_CODES } from '../src/platform/http/error-codes.js';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import request from 'supertest';
import { checked, loadApiContract } from './support/openapi-contract.js';
import { harness, Partner, TestApp } from './support/harness.js';

const NIL = '00000000-0000-4000-8000-000000000000';

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, { properties: Record<string, Record<string, unknown>>; required?: string[] }>;
    securitySchemes: Record<string, object>;
  };
};
type Operation = {
  summary?: string;
  security?: Record<string, string[]>[];
  responses: Record<
    string,
    {
      description?: string;
      headers?: Record<string, { required?: boolean; schema?: object }>;
      content?: Record<string, { schema: { $ref: string } }>;
    }
  >;
  parameters?: { name: string; in: string }[];
  requestBody?: { content: Record<string, { schema: { $ref: string } }> };
  callbacks?: Record<string, Record<string, { post: CallbackPost }>>;
};
type CallbackPost = {
  parameters: { name: string; in: string; required: boolean; schema: Record<string, unknown> }[];
  requestBody: { content: Record<string, { schema: { $ref: string } }> };
  responses: Record<string, unknown>;
};

describe.each(['A', 'B'] as const)('the OpenAPI document, variant %s', (variant) => {
  const companyProp = variant === 'A' ? 'callback' : 'status_callback';
  const otherProp = variant === 'A' ? 'status_callback' : 'callback';
  const wPath = variant === 'A' ? 'withdrawal-requests' : 'withdrawal';
  const otherWPath = variant === 'A' ? 'withdrawal' : 'withdrawal-requests';
  let t: TestApp;
  let p: Partner;
  let doc: Doc;

  const e2e = harness({ API_VARIANT: variant, ROLE: 'api' });
  beforeAll(async () => {
    ({ t, p } = e2e);
    doc = (await t.http().get('/docs-json').expect(200)).body as Doc;
  });

  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({ path, method, op })),
    );

  it('is a valid OpenAPI 3.1 document listing only the paths and properties of its variant', async () => {
    expect(doc.openapi).toBe('3.1.0');
    await expect(loadApiContract(doc)).resolves.toBeDefined(); // @seriousme/openapi-schema-validator
    const paths = Object.keys(doc.paths);
    expect(paths).toEqual(
      expect.arrayContaining([
        `/v1/companies/{companyId}/${wPath}`,
        `/v1/companies/{companyId}/${wPath}/{withdrawalRequestId}/cancel`,
      ]),
    );
    expect(paths.filter((path) => path.split('/')[4] === otherWPath)).toEqual([]);
    expect(paths.includes('/v1/companies/{companyId}/terms')).toBe(variant === 'B');
    for (const schema of ['CreateCompanyDto', 'CompanyResponse']) {
      expect(Object.keys(doc.components.schemas[schema].properties)).toContain(companyProp);
      expect(Object.keys(doc.components.schemas[schema].properties)).not.toContain(otherProp);
    }
    expect(doc.components.schemas.CompanyResponse.required).toContain(companyProp);
    expect(JSON.stringify(doc)).not.toContain('x-variant');
  });

  it('declares the real credentials: partner API key, operator token, Basic for the dashboard', () => {
    expect(doc.components.securitySchemes).toEqual({
      partnerApiKey: expect.objectContaining({ type: 'http', scheme: 'bearer', bearerFormat: 'API key' }),
      operatorToken: expect.objectContaining({ type: 'http', scheme: 'bearer', bearerFormat: 'operator token' }),
      operatorBasic: expect.objectContaining({ type: 'http', scheme: 'basic' }),
    });
    expect(JSON.stringify(doc)).not.toMatch(/JWT/);
    for (const { path, op } of operations()) {
      const security = (op.security ?? []).flatMap((s) => Object.keys(s)).sort();
      if (path === '/admin/queues') expect(security).toEqual(['operatorBasic', 'operatorToken']);
      else if (path.startsWith('/admin/')) {
        expect(security).toEqual(['operatorToken']);
        // The role it needs, and the 403 of an operator without it.
        expect({
          path,
          role: (op as Record<string, unknown>)['x-required-role'],
          forbidden: Object.keys(op.responses).includes('403'),
        }).toEqual({ path, role: expect.stringMatching(/^(viewer|operator|admin)$/), forbidden: true });
      } else if (path.startsWith('/v1/') && path !== '/v1/callbacks/source-ips')
        expect(security).toEqual(['partnerApiKey']);
      else expect(security).toEqual([]);
    }
  });

  it('documents 401 and 503 with Retry-After on every authenticated route, 429 with Retry-After on partner routes, 400 and 404 on ids, 409 and 422 on idempotent creates', () => {
    for (const { path, method, op } of operations()) {
      const statuses = Object.keys(op.responses);
      const where = `${method} ${path}`;
      if (op.security?.length)
        expect({ where, statuses }).toEqual({ where, statuses: expect.arrayContaining(['401']) });
      // The dashboard's page is bull-board's, served without the database.
      if (op.security?.length && path !== '/admin/queues') {
        expect({ where, retryAfter: op.responses['503']?.headers?.['Retry-After'] }).toMatchObject({
          where,
          retryAfter: { required: true, schema: { type: 'string', pattern: '^[0-9]+$' } },
        });
      }
      if (op.security?.some((s) => 'partnerApiKey' in s)) {
        expect(op.responses['429']?.headers?.['Retry-After']).toMatchObject({
          required: true,
          schema: { type: 'string', pattern: '^[0-9]+$' },
        });
      }
      if (path.includes('{'))
        expect({ where, statuses }).toEqual({ where, statuses: expect.arrayContaining(['400', '404']) });
      if (op.parameters?.some((param) => param.name === 'Idempotency-Key')) {
        expect({ where, statuses }).toEqual({ where, statuses: expect.arrayContaining(['409', '413', '422']) });
      }
    }
  });

  it('passes an independent linter: Redocly, recommended rules, no error and no warning', async () => {
    const text = (await t.http().get('/docs-json').expect(200)).text;
    const problems = await lintFromString({
      source: text,
      absoluteRef: 'docs-json.json',
      config: await createConfig({ extends: ['recommended'] }),
    });
    expect(problems.map((x) => `${x.severity} ${x.ruleId} ${x.location[0]?.pointer ?? ''}: ${x.message}`)).toEqual([]);
  });

  it('refuses a query parameter on the operations that take none, naming it', async () => {
    for (const path of ['/health', '/ready', '/metrics', '/v1/callbacks/source-ips']) {
      const res = await t.http().get(`${path}?verbose=1`).expect(400);
      expect(res.body).toEqual({
        statusCode: 400,
        error: 'Bad Request',
        message: ['query parameter verbose is not accepted; this operation takes none'],
        code: 'invalid_request',
      });
    }
  });

  it('describes the callback POST on each operation that registers a URL', () => {
    const registering: [string, string[]][] = [
      ['/v1/companies', [companyProp]],
      ['/v1/companies/{companyId}/limit-requests', ['status_callback']],
      [`/v1/companies/{companyId}/${wPath}`, ['status_callback', 'loan_status_callback']],
    ];
    for (const [path, properties] of registering) {
      const callbacks = doc.paths[path].post.callbacks!;
      expect(Object.keys(callbacks)).toEqual(properties);
      for (const property of properties) {
        const post = callbacks[property][`{$request.body#/${property}}`].post;
        expect(post.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/CallbackBody');
        expect(post.parameters.map((h) => [h.name, h.in, h.required])).toEqual([
          ['webhook-id', 'header', true],
          ['webhook-timestamp', 'header', true],
          ['webhook-signature', 'header', true],
          ['user-agent', 'header', true],
        ]);
        expect(Object.keys(post.responses).sort()).toEqual(['2XX', '410', 'default']);
      }
    }
    // The operational events' POST, on the operation that sets where they go.
    const events = doc.paths['/v1/partner'].patch.callbacks!;
    expect(Object.keys(events)).toEqual(['operationsUrl']);
    const eventPost = events.operationsUrl['{$request.body#/operationsUrl}'].post;
    expect(eventPost.requestBody.content['application/json'].schema.$ref).toBe(
      '#/components/schemas/OperationalEventBody',
    );
    expect(eventPost.parameters.map((h) => h.name)).toEqual([
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
      'user-agent',
    ]);
    expect(Object.keys(doc.components.schemas.OperationalEventBody.properties)).toEqual(['type', 'timestamp', 'data']);
    for (const [schema, keys] of [
      ['DestinationFailingData', ['destination', 'since', 'lastError', 'waiting']],
      ['DestinationRecoveredData', ['destination', 'failingSince', 'recoveredAt', 'waiting']],
      ['CallbacksFailedData', ['destination', 'count', 'from', 'to']],
    ] as const) {
      expect(Object.keys(doc.components.schemas[schema].properties)).toEqual(keys);
    }
    const others = operations().filter(
      ({ path, method }) =>
        !(method === 'post' && registering.some(([p]) => p === path)) &&
        !(method === 'patch' && path === '/v1/partner'),
    );
    expect(others.filter(({ op }) => op.callbacks)).toEqual([]);
    expect(Object.keys(doc.components.schemas.CallbackBody.properties)).toEqual([
      'message',
      'withdrawalId',
      'companyId',
      'limitRequestId',
      'loanId',
    ]);
    // Every error carries its code; the document lists every code with its meaning (contract §1).
    const code = doc.components.schemas.ErrorResponse.properties.code;
    expect(doc.components.schemas.ErrorResponse.required).toContain('code');
    expect(code.enum).toEqual(Object.keys(ERROR_CODES));
    for (const [name, meaning] of Object.entries(ERROR_CODES))
      expect(code.description).toContain(`\`${name}\`: ${meaning}`);
  });

  it('documents redelivery (one rule, both routes: refused for a test callback or a removed URL, never for an open circuit) and bulk replay with its bound and filters', () => {
    for (const path of ['/v1/callbacks/{callbackId}/redeliver', '/admin/v1/callbacks/{callbackId}/redeliver']) {
      const refused = doc.paths[path].post.responses['409'].description;
      expect(refused).toContain('test_callback_not_redeliverable');
      expect(refused).toContain('callback_url_removed');
      expect(refused).not.toContain('destination_open');
      expect(doc.paths[path].post.summary).toContain('while its destination is open, it is sent now as the probe');
    }
    expect(Object.keys(ERROR_CODES)).not.toContain('destination_open');
    // The operators' probe answers the destinations it brought forward.
    const probe = doc.paths['/admin/v1/destinations/probe'].post.responses['202'];
    expect(probe.content?.['application/json'].schema.$ref).toBe('#/components/schemas/DestinationListResponse');
    const bulk: [string, string[]][] = [
      ['/v1/callbacks/redeliver', ['status', 'since', 'until', 'destination']],
      ['/admin/v1/callbacks/redeliver', ['status', 'since', 'until', 'destination', 'partnerId', 'companyId']],
    ];
    for (const [path, properties] of bulk) {
      const op = doc.paths[path].post;
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['202', '400', '422']));
      expect(op.responses['422'].description).toContain('replay_over_limit');
      const ref = op.requestBody!.content['application/json'].schema.$ref;
      expect(Object.keys(doc.components.schemas[ref.split('/').pop()!].properties)).toEqual(properties);
    }
    const queryOf = (path: string) =>
      (doc.paths[path].get.parameters ?? []).filter((x) => x.in === 'query').map((x) => x.name);
    expect(queryOf('/admin/v1/callbacks')).toEqual(expect.arrayContaining(['partnerId', 'destination']));
    expect(queryOf('/v1/callbacks')).not.toContain('partnerId');
  });

  it("documents the operators' partner look-up: its query, a viewer's role, and a view without any secret", () => {
    const list = doc.paths['/admin/v1/partners'].get;
    const one = doc.paths['/admin/v1/partners/{partnerId}'].get;
    expect((list.parameters ?? []).filter((x) => x.in === 'query').map((x) => x.name)).toEqual([
      'name',
      'limit',
      'cursor',
    ]);
    for (const op of [list, one]) expect((op as Record<string, unknown>)['x-required-role']).toBe('viewer');
    expect(Object.keys(one.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '404']));
    const view = doc.components.schemas.PartnerViewResponse;
    const fields = [
      'id',
      'name',
      'createdAt',
      'signatureScheme',
      'operationsUrl',
      'apiKeyRotatedAt',
      'clientCertificate',
      'destinations',
    ];
    expect(Object.keys(view.properties)).toEqual(fields);
    expect(view.required).toEqual(fields);
    expect(Object.keys(doc.components.schemas.PartnerCertificateSummary.properties)).toEqual(['subject', 'notAfter']);
    expect(Object.keys(doc.components.schemas.PartnerDestinationCounts.properties)).toEqual(['open', 'total']);
    expect(Object.keys(doc.components.schemas.PartnerPageResponse.properties)).toEqual(['items', 'nextCursor']);
  });

  it('matches a loan before its first payment (lastPayment null) and after it', async () => {
    const c = (await t.as(p.apiKey, 'post', '/v1/companies', { name: 'Loan Co' }).expect(201)).body.id;
    const l = (await t.as(p.apiKey, 'post', `/v1/companies/${c}/limit-requests`, { amount: '1000' }).expect(201)).body
      .id;
    await t.admin('post', `/admin/v1/limit-requests/${l}/approve`).expect(200);
    const w = (await t.as(p.apiKey, 'post', `/v1/companies/${c}/${wPath}`, { amount: '100.5' }).expect(201)).body.id;
    await t.admin('post', `/admin/v1/withdrawal-requests/${w}/accept`).expect(200);
    const loanId = (await t.admin('post', `/admin/v1/withdrawal-requests/${w}/pay-out`).expect(200)).body.loanId;
    const before = await t.as(p.apiKey, 'get', `/v1/companies/${c}/loans/${loanId}`).expect(200);
    expect(before.body).toMatchObject({ principal: '100.50', payments: [], lastPayment: null });
    await t.admin('post', `/admin/v1/loans/${loanId}/payments`, { amount: '50' }).expect(201);
    const after = await t.as(p.apiKey, 'get', `/v1/companies/${c}/loans/${loanId}`).expect(200);
    expect(after.body.lastPayment).toMatchObject({ amount: '50.00' });
  });

  it('matches the error answers: malformed id, unknown id, body too large, Idempotency-Key reused or invalid', async () => {
    await t.as(p.apiKey, 'get', '/v1/companies/not-a-uuid').expect(400);
    await t.as(p.apiKey, 'get', `/v1/companies/${NIL}/status`).expect(404);
    await t.as(p.apiKey, 'post', '/v1/companies', { name: 'x'.repeat(70 * 1024) }).expect(413);
    await t.as(p.apiKey, 'post', '/v1/companies', { name: 'Once' }).set('Idempotency-Key', 'k-1').expect(201);
    const replay = await t
      .as(p.apiKey, 'post', '/v1/companies', { name: 'Once' })
      .set('Idempotency-Key', 'k-1')
      .expect(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    await t.as(p.apiKey, 'post', '/v1/companies', { name: 'Twice' }).set('Idempotency-Key', 'k-1').expect(422);
    await t
      .as(p.apiKey, 'post', '/v1/companies', { name: 'Long key' })
      .set('Idempotency-Key', 'k'.repeat(256))
      .expect(400);
    await t.http().get('/admin/queues').expect(401);
    await t.admin('get', '/admin/queues').expect(200);
    await t.as(p.apiKey, 'get', `/v1/companies/${NIL}/${otherWPath}/${NIL}`).expect(404); // Nest's own 404: no such route
  });
});

describe('the response check', () => {
  let t: TestApp;
  const e2e = harness({ ROLE: 'api' }, { partner: null });
  beforeAll(() => ({ t } = e2e));

  const json = (status: number, body: unknown, headers: Record<string, string> = {}) => ({
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    body,
    text: JSON.stringify(body),
  });
  const ERROR_429 = { statusCode: 429, error: 'Too Many Requests', message: 'slow down', code: 'rate_limited' };

  it('names the route, the status and what differs', () => {
    const status = `/v1/companies/${NIL}/status`;
    expect(t.contract.check('GET', '/v1/partners', json(200, []))).toMatch(
      /^OpenAPI mismatch: GET \/v1\/partners → 200: \/docs-json documents no GET operation on this path/,
    );
    expect(
      t.contract.check(
        'GET',
        '/v1/partners',
        json(404, { statusCode: 404, error: 'Not Found', message: 'Cannot GET /v1/partners', code: 'not_found' }),
      ),
    ).toBeNull();
    expect(
      t.contract.check(
        'GET',
        status,
        json(500, { statusCode: 500, message: 'Internal server error', code: 'internal_error' }),
      ),
    ).toMatch(
      /GET \/v1\/companies\/.+\/status → 500: status 500 is not documented for operation CompaniesController_status \(documented: 200, .*429/,
    );
    expect(t.contract.check('GET', status, json(429, ERROR_429))).toMatch(
      /header Retry-After is documented as required but missing/,
    );
    expect(t.contract.check('GET', status, json(429, ERROR_429, { 'retry-after': '1' }))).toBeNull();
    expect(t.contract.check('GET', '/health', json(200, { status: 'ok', uptime: 1 }))).toMatch(
      /body must NOT have additional properties \{"additionalProperty":"uptime"\}/,
    );
    expect(
      t.contract.check('GET', '/health', {
        status: 200,
        headers: { 'content-type': 'text/html' },
        body: {},
        text: '<p>ok</p>',
      }),
    ).toMatch(/content type "text\/html" is not documented for 200/);
    const credit = {
      companyId: NIL,
      creditStatus: 'active',
      creditLimit: '10',
      borrowedAmount: '0.00',
      creditBalance: '10.00',
      currency: 'EUR',
      updatedAt: 'now',
    };
    expect(t.contract.check('GET', status, json(200, credit))).toMatch(
      /body\/creditLimit must match pattern.*\n.*body\/updatedAt must match format "date-time"/,
    );
  });

  it('fails the request whose response does not match, with that message', async () => {
    const doc = (await t.http().get('/docs-json').expect(200)).body as Doc;
    delete doc.paths['/health'];
    const withoutHealth = await loadApiContract(doc);
    await expect(checked(request(t.app.getHttpServer()).get('/health'), withoutHealth).expect(200)).rejects.toThrow(
      /OpenAPI mismatch: GET \/health → 200: \/docs-json documents no GET operation on this path/,
    );
  });
});
