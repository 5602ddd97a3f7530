/**
 * The trust boundary, walked on Fastify's own route table: every route the running service has
 * (the API, /admin, the queue dashboard's page, assets and API, the API document, health), in
 * many spellings of its path, without a credential, with a wrong one and with a too-weak one.
 * No such request may answer 2xx where the route is not public, none may answer 5xx, and none may
 * write anything (no row, no audit entry, no job). The routes are recorded by a hook of this test
 * (Fastify's onRoute, before the service registers any), not read from the service's own
 * declarations, which this checks against the rule docs/security.md states.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { RouteOptions } from 'fastify';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { roleAllows } from '../src/operators/access/operator-role.js';
import { accessOf, RouteAccess } from '../src/operators/access/route-access.js';
import { CallbackQueue } from '../src/delivery/callback-queue.js';
import { CallbackRetention } from '../src/operations/callback-retention.js';
import { expectedRole } from './support/admin-routes.js';
import { ADMIN_TOKEN, createPartner, harness, TestApp } from './support/harness.js';
import { signInWith } from './support/portal.js';

/** The routes anyone may call: exactly these (a route added here must be public on purpose). */
const PUBLIC = [
  /^\/health$/,
  /^\/ready$/,
  /^\/metrics$/,
  /^\/v1\/callbacks\/source-ips$/,
  /^\/docs(-json|-yaml)?(\/.*)?$/,
];
/** The portal's pages without a session (its sign-in): no credential, but a browser's, limited per address. */
const PORTAL_VISITOR = /^\/portal\/(login|signed-out|portal\.css|portal\.js)$/;

/** The access each route must declare, by the rule of docs/security.md (not by its own declaration). */
function expectedAccess(method: string, url: string): RouteAccess {
  if (PUBLIC.some((p) => p.test(url))) return { to: 'anyone' };
  if (PORTAL_VISITOR.test(url)) return { to: 'portal-visitor' };
  const read = method === 'GET' || method === 'HEAD';
  if (url === '/portal' || url.startsWith('/portal/')) return { to: 'portal-session' };
  if (url === '/admin/queues' || url.startsWith('/admin/queues/'))
    return { to: 'browser-operator', role: read ? 'viewer' : 'operator' };
  if (url.startsWith('/admin/'))
    return {
      to: 'operator',
      role: expectedRole({ method: read ? 'get' : (method.toLowerCase() as 'post'), path: url }),
    };
  return { to: 'partner' };
}

interface Fixtures {
  params: Record<string, string>;
  /** Credentials by name; each route is called with those it must refuse. */
  credentials: Record<string, string | null>;
}

const basic = (name: string, token: string) => `Basic ${Buffer.from(`${name}:${token}`).toString('base64')}`;

/** The credentials a route must refuse: none, wrong ones, and every one of the wrong kind or a weaker role. */
function refused(access: RouteAccess, f: Fixtures): string[] {
  const always = ['none', 'wrong bearer', 'wrong basic'];
  if (access.to === 'anyone' || access.to === 'portal-visitor') return [];
  if (access.to === 'partner') return [...always, 'viewer', 'operator', 'bootstrap admin'];
  // The portal's credential is its session cookie: none, a made-up one, an ended one, or any API credential.
  if (access.to === 'portal-session')
    return [...always, 'partner', 'viewer', 'operator', 'bootstrap admin', 'made-up session', 'ended session'];
  const below = (['viewer', 'operator'] as const).filter((r) => !roleAllows(r, access.role));
  const basicBelow = access.to === 'browser-operator' ? below.map((r) => `${r} basic`) : [];
  // Basic is the dashboard's alone: on the API it is no credential at all.
  const basicElsewhere = access.to === 'operator' ? ['bootstrap admin basic'] : [];
  return [...always, 'partner', ...below, ...basicBelow, ...basicElsewhere].filter((c) => c in f.credentials);
}

/** A concrete path for a route pattern: its parameters from the fixtures. */
function concrete(url: string, params: Record<string, string>): string {
  return url
    .replace(/:(\w+)/g, (_, name: string) => params[name] ?? '00000000-0000-4000-8000-000000000000')
    .replace(/\*$/, 'x.js');
}

/** The spellings of one path that a router might take for it, or a check on the raw URL might miss. */
function spellings(path: string, host: string): string[] {
  const segments = path.split('/').slice(1);
  const out = [path];
  segments.forEach((segment, i) => {
    const at = segment.search(/[a-z]/i);
    if (at < 0) return;
    const encoded = `${segment.slice(0, at)}%${segment.charCodeAt(at).toString(16)}${segment.slice(at + 1)}`;
    out.push(`/${[...segments.slice(0, i), encoded, ...segments.slice(i + 1)].join('/')}`);
  });
  const [first, ...rest] = segments;
  out.push(`http://${host}${path}`); // absolute-form request target
  out.push(`/${first}/./${rest.join('/')}`, `/${first}/x/../${rest.join('/')}`, `/./${segments.join('/')}`);
  out.push(path.replace(/\//g, '//'), `/${first}%2f${rest.join('/')}`);
  out.push(`/${first};x/${rest.join('/')}`, `${path};x`, `${path}/`);
  out.push(
    path.toUpperCase(),
    path.replace(/[a-z]/g, (c, i: number) => (i % 2 ? c.toUpperCase() : c)),
  );
  return [...new Set(out)];
}

/** One raw request: the request target exactly as given (no client normalises it). */
function send(port: number, method: string, target: string, authorization: string | null): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method) ? '{}' : undefined;
    const headers: Record<string, string> = { host: `127.0.0.1:${port}` };
    // A `cookie:` credential is a portal session's cookie, sent as the browser sends it.
    if (authorization?.startsWith('cookie:')) headers.cookie = authorization.slice('cookie:'.length);
    else if (authorization !== null) headers.authorization = authorization;
    if (body !== undefined)
      Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(body.length) });
    const req = http.request({ host: '127.0.0.1', port, method, path: target, headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Every table's rows (but delivery_workers, a heartbeat) and every job count of the queue. */
async function snapshot(t: TestApp): Promise<string> {
  const tables = await t.sql<{ name: string }>(
    `SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'delivery_workers' ORDER BY 1`,
  );
  const rows: string[] = [];
  for (const { name } of tables) {
    const [{ digest }] = await t.sql<{ digest: string }>(
      `SELECT md5(coalesce(string_agg(x::text, ',' ORDER BY x::text), '')) AS digest FROM "${name}" x`,
    );
    rows.push(`${name}:${digest}`);
  }
  const jobs = await t.app.get(CallbackQueue).queue.getJobCounts();
  return JSON.stringify({ rows, jobs });
}

async function fixtures(t: TestApp, variant: 'A' | 'B'): Promise<Fixtures> {
  const p = await createPartner(t);
  const key = (m: 'get' | 'post' | 'patch', path: string, body?: object) => t.as(p.apiKey, m, path, body);
  const companyUrl = variant === 'A' ? 'callback' : 'status_callback';
  const companyId = (
    await key('post', '/v1/companies', { name: 'Walked', [companyUrl]: 'http://127.0.0.1:9/c' }).expect(201)
  ).body.id as string;
  const limitRequestId = (
    await key('post', `/v1/companies/${companyId}/limit-requests`, { amount: '1000' }).expect(201)
  ).body.id as string;
  await t.admin('post', `/admin/v1/limit-requests/${limitRequestId}/approve`).expect(200);
  const collection = variant === 'A' ? 'withdrawal-requests' : 'withdrawal';
  const withdrawalRequestId = (
    await key('post', `/v1/companies/${companyId}/${collection}`, { amount: '10' }).expect(201)
  ).body.id as string;
  await t.admin('post', `/admin/v1/withdrawal-requests/${withdrawalRequestId}/accept`).expect(200);
  const loanId = (await t.admin('post', `/admin/v1/withdrawal-requests/${withdrawalRequestId}/pay-out`).expect(200))
    .body.loanId as string;
  // No worker runs (ROLE=api): the callbacks stay put. One failed, for the dashboard's Retry.
  const [callback] = await t.sql<{ id: string }>(
    `UPDATE callbacks SET status = 'failed', next_attempt_at = NULL WHERE id = (SELECT id FROM callbacks ORDER BY seq LIMIT 1) RETURNING id`,
  );
  const operators: Record<string, { id: string; name: string; token: string }> = {};
  for (const role of ['viewer', 'operator'] as const) {
    operators[role] = (await t.admin('post', '/admin/v1/operators', { name: `walker-${role}`, role }).expect(201)).body;
  }
  // A portal session, opened from a link and then ended by an operator: its cookie opens nothing.
  const ended = await signInWith(t, (await key('post', '/v1/partner/portal-links', {}).expect(201)).body.url as string);
  await t.admin('delete', `/admin/v1/partners/${p.id}/portal-sessions`).expect(204);
  return {
    params: {
      companyId,
      limitRequestId,
      withdrawalRequestId,
      loanId,
      callbackId: callback.id,
      jobId: callback.id,
      partnerId: p.id,
      operatorId: operators.viewer.id,
      queueName: 'callbacks',
      queueStatus: 'failed',
    },
    credentials: {
      none: null,
      'wrong bearer': 'Bearer fso_not-a-token',
      'wrong basic': basic('admin', 'not-the-token'),
      partner: `Bearer ${p.apiKey}`,
      viewer: `Bearer ${operators.viewer.token}`,
      operator: `Bearer ${operators.operator.token}`,
      'viewer basic': basic(operators.viewer.name, operators.viewer.token),
      'operator basic': basic(operators.operator.name, operators.operator.token),
      'bootstrap admin': `Bearer ${ADMIN_TOKEN}`,
      'bootstrap admin basic': basic('admin', ADMIN_TOKEN),
      'made-up session': 'cookie:portal_session=fss_made-up',
      'ended session': `cookie:${ended}`,
    },
  };
}

/** Runs the calls, at most `n` at a time. */
async function pool<T>(items: T[], n: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) await run(items[next++]);
    }),
  );
}

describe.each(['A', 'B'] as const)('variant %s: every route of the route table', (variant) => {
  let t: TestApp;
  let port: number;
  const routes: RouteOptions[] = [];

  const record = (app: NestFastifyApplication) =>
    app
      .getHttpAdapter()
      .getInstance()
      .addHook('onRoute', (r: RouteOptions) => void routes.push(r));
  const e2e = harness({ API_VARIANT: variant, ROLE: 'api' }, { beforeSetup: record, partner: null });
  beforeAll(async () => {
    ({ t } = e2e);
    // Retention would prune the ended portal session made below on its own schedule, not because of
    // a request: it is stopped while the walk checks that no request writes anything.
    await t.app.get(CallbackRetention).beforeApplicationShutdown();
    await new Promise<void>((resolve) => t.app.getHttpServer().listen(0, '127.0.0.1', resolve));
    port = (t.app.getHttpServer().address() as AddressInfo).port;
  }, 60_000);

  it('declares the access the rule gives it, on every route (the dashboard, docs and HEAD routes included)', () => {
    const problems: string[] = [];
    for (const r of routes) {
      for (const method of [r.method].flat()) {
        const declared = accessOf(r.config);
        if (JSON.stringify(declared) !== JSON.stringify(expectedAccess(method, r.url)))
          problems.push(`${method} ${r.url}: ${JSON.stringify(declared)}`);
      }
    }
    expect(problems).toEqual([]);
    const urls = new Set(routes.map((r) => r.url));
    for (const u of [
      '/admin/queues',
      '/admin/queues/api/queues',
      '/admin/queues/static/*',
      '/docs',
      '/docs-json',
      '/health',
      '/admin/v1/audit',
      '/portal',
      '/portal/callbacks/:callbackId',
      '/portal/replay',
    ])
      expect(urls).toContain(u);
    // Every page and action of the portal, each a route of a Nest controller.
    const portal = [
      ...['/portal/callbacks', '/portal/callbacks/find', '/portal/callbacks/:callbackId/redeliver', '/portal/urls'],
      ...['/portal/urls/move', '/portal/events', '/portal/test', '/portal/settings', '/portal/settings/test-event'],
      ...['/portal/settings/roll-secret', '/portal/settings/signature-scheme', '/portal/login', '/portal/logout'],
      ...['/portal/signed-out', '/portal/portal.css', '/portal/portal.js'],
    ];
    for (const u of portal) expect(urls).toContain(u);
    // The operators' partner look-up, walked as every other viewer's read.
    const reads = routes.filter((r) => [r.method].flat().includes('GET')).map((r) => r.url);
    expect(reads).toEqual(expect.arrayContaining(['/admin/v1/partners', '/admin/v1/partners/:partnerId']));
    for (const u of [
      '/docs/partners',
      '/docs/partners/guide.css',
      '/docs/partners/portal-overview.png',
      '/docs/partners/api',
      '/docs/partners/api-json',
    ])
      expect(urls).toContain(u);
    for (const u of [
      '/v1/callback-urls',
      '/v1/callback-urls/move',
      '/v1/partner/rotate-signing-secret',
      '/v1/partner/signature-scheme',
    ])
      expect(urls).toContain(u);
    expect(routes.length).toBeGreaterThan(80);
  });

  it('answers no spelling of any route 2xx without the credential it needs, none 5xx, and writes nothing', async () => {
    const f = await fixtures(t, variant);
    const before = await snapshot(t);
    const calls: { method: string; target: string; credential: string; mustRefuse: boolean; route: string }[] = [];
    for (const r of routes) {
      for (const method of [r.method].flat()) {
        const access = expectedAccess(method, r.url);
        const path = concrete(r.url, f.params);
        const open = access.to === 'anyone' || access.to === 'portal-visitor';
        const credentials = open ? ['none'] : refused(access, f);
        for (const target of spellings(path, `127.0.0.1:${port}`)) {
          for (const credential of credentials) {
            calls.push({ method, target, credential, mustRefuse: !open, route: `${method} ${r.url}` });
          }
        }
      }
    }
    const problems: string[] = [];
    await pool(calls, 16, async (c) => {
      const status = await send(port, c.method, c.target, f.credentials[c.credential]);
      if (status >= 500 || (c.mustRefuse && status >= 200 && status < 300))
        problems.push(`${c.route} as ${c.method} ${c.target} with ${c.credential}: ${status}`);
    });
    expect(problems).toEqual([]);
    expect(calls.length).toBeGreaterThan(3000);
    expect(await snapshot(t)).toBe(before);
  }, 180_000);
});
