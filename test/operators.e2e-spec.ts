import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { AUDIT_ACTIONS } from '../src/operators/audit/audit-actions.js';
import { OPERATOR_ROLES, OperatorRole, roleAllows } from '../src/operators/access/operator-role.js';
import { Partner } from '../src/partners/partner.entity.js';
import { PARTNER_KEY_CACHE_MS } from '../src/partners/partners.service.js';
import { DataSource } from 'typeorm';
import { AdminRoute, documentedAdminRoutes, expectedRole, nestAdminRoutes } from './support/admin-routes.js';
import { buildService, sparePort, startService, stop, workerEnv } from './support/processes.js';
import { ADMIN_TOKEN, createPartner, harness, TestApp, until } from './support/harness.js';

let t: TestApp;
const e2e = harness({}, { partner: null });
beforeAll(() => ({ t } = e2e));

type Method = AdminRoute['method'];
const bearer = (token: string) => `Bearer ${token}`;

/** A request as any caller, checked against the OpenAPI document like every other. */
function call(method: Method, path: string, authorization: string | null, body?: object) {
  let r = t.http()[method](path);
  if (authorization !== null) r = r.set('Authorization', authorization);
  return body === undefined ? r : r.send(body);
}

async function newOperator(role: OperatorRole, name = `${role}-${randomUUID().slice(0, 8)}`) {
  const res = await call('post', '/admin/v1/operators', bearer(ADMIN_TOKEN), { name, role }).expect(201);
  return res.body as { id: string; name: string; role: OperatorRole; token: string; createdAt: string };
}

const auditCount = async () => Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM audit_entries'))[0].n);

describe('operators and roles', () => {
  it('walks every /admin route: unknown 401, a role below the route 403, the route role and above pass the guard', async () => {
    const nest = nestAdminRoutes(t.app);
    const documented = documentedAdminRoutes((await t.http().get('/docs-json').expect(200)).body).filter(
      (r) => r.path !== '/admin/queues',
    );
    // Nothing under /admin escapes the document (or this walk).
    expect(nest.map((r) => `${r.method} ${r.path}`)).toEqual(documented.map((r) => `${r.method} ${r.path}`));
    expect(nest.length).toBeGreaterThanOrEqual(20);

    const callers: Record<string, string> = {};
    for (const role of OPERATOR_ROLES) callers[role] = bearer((await newOperator(role)).token);
    const before = await auditCount();
    const problems: string[] = [];
    for (const route of nest) {
      const path = route.path.replace(/:\w+/g, () => randomUUID());
      const body = route.method === 'get' || route.method === 'delete' ? undefined : {};
      const needed = expectedRole(route);
      const unknown = await call(route.method, path, bearer('fso_not-a-token'), body);
      if (unknown.status !== 401) problems.push(`${route.method} ${route.path}: unknown token → ${unknown.status}`);
      const none = await call(route.method, path, null, body);
      if (none.status !== 401) problems.push(`${route.method} ${route.path}: no credential → ${none.status}`);
      for (const role of [...OPERATOR_ROLES, 'bootstrap'] as const) {
        const held = role === 'bootstrap' ? 'admin' : role;
        const res = await call(route.method, path, role === 'bootstrap' ? bearer(ADMIN_TOKEN) : callers[role], body);
        const allowed = roleAllows(held, needed);
        if (allowed && (res.status === 401 || res.status === 403))
          problems.push(`${route.method} ${route.path}: ${role} → ${res.status}, expected past the guard`);
        if (!allowed && res.status !== 403)
          problems.push(`${route.method} ${route.path}: ${role} → ${res.status}, expected 403 (needs ${needed})`);
        if (!allowed && !String(res.body.message).includes(needed))
          problems.push(`${route.method} ${route.path}: the 403 does not name role ${needed}`);
      }
    }
    expect(problems).toEqual([]);
    // Every request above was refused (401, 403) or failed (400, 404): none wrote an entry.
    expect(await auditCount()).toBe(before);
  }, 120_000);

  it('declares, for every changing /admin route, its audit action; docs/operations.md documents each action with its route', async () => {
    const document = (await t.http().get('/docs-json').expect(200)).body as {
      paths: Record<string, Record<string, { 'x-audit-action'?: string; 'x-required-role'?: string }>>;
    };
    const page = readFileSync(path.join(__dirname, '../docs/operations.md'), 'utf8');
    const rows = new Map([...page.matchAll(/^\| `([a-z.-]+)` \| ([^|]+) \|/gm)].map((m) => [m[1], m[2]]));
    const problems: string[] = [];
    for (const route of nestAdminRoutes(t.app)) {
      const operation = document.paths[route.path.replace(/:(\w+)/g, '{$1}')][route.method];
      const action = operation['x-audit-action'];
      if (operation['x-required-role'] !== expectedRole(route))
        problems.push(`${route.method} ${route.path}: x-required-role ${operation['x-required-role']}`);
      if (route.method === 'get') {
        if (action !== undefined)
          problems.push(`${route.method} ${route.path}: a read declares audit action ${action}`);
        continue;
      }
      if (!action || !(action in AUDIT_ACTIONS))
        problems.push(`${route.method} ${route.path}: no known audit action (${action})`);
      else if (!rows.get(action)?.includes(`${route.method.toUpperCase()} ${route.path.replace(/:\w+/g, '{id}')}`))
        problems.push(
          `${action}: docs/operations.md does not give its route ${route.method.toUpperCase()} ${route.path}`,
        );
    }
    expect(problems).toEqual([]);
    expect([...rows.keys()].filter((a) => a.includes('.')).sort()).toEqual(Object.keys(AUDIT_ACTIONS).sort());
    for (const action of ['limit-request.approve', 'company.credit.update', 'callback.redeliver'])
      expect(AUDIT_ACTIONS).toHaveProperty([action]);
  });

  it('creates an operator whose token is shown once and stored hashed; names are unique, 1–100 characters', async () => {
    const alice = await newOperator('operator', 'alice');
    expect(alice).toEqual({
      id: expect.any(String),
      name: 'alice',
      role: 'operator',
      token: expect.stringMatching(/^fso_[A-Za-z0-9_-]{43}$/),
      createdAt: expect.any(String),
    });
    const [row] = await t.sql<{ token_hash: string }>('SELECT token_hash FROM operators WHERE id = $1', [alice.id]);
    expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(await t.sql('SELECT * FROM operators'))).not.toContain(alice.token);

    const clash = await call('post', '/admin/v1/operators', bearer(ADMIN_TOKEN), {
      name: 'alice',
      role: 'viewer',
    }).expect(409);
    expect(clash.body.message).toContain('alice');
    await call('post', '/admin/v1/operators', bearer(ADMIN_TOKEN), { name: 'admin', role: 'viewer' }).expect(409);
    for (const [body, field] of [
      [{ name: '', role: 'viewer' }, 'name'],
      [{ name: 'x'.repeat(101), role: 'viewer' }, 'name'],
      [{ name: 'a:b', role: 'viewer' }, 'name'],
      [{ name: 'bob', role: 'root' }, 'role'],
      [{ name: 'bob' }, 'role'],
      [{ name: 'bob', role: 'viewer', token: 'mine' }, 'token'],
    ] as const) {
      const res = await call('post', '/admin/v1/operators', bearer(ADMIN_TOKEN), body).expect(400);
      expect(JSON.stringify(res.body.message)).toContain(field);
    }
    await call('post', '/admin/v1/operators', bearer(ADMIN_TOKEN), { name: 'x'.repeat(100), role: 'viewer' }).expect(
      201,
    );

    const list = (await call('get', '/admin/v1/operators', bearer(alice.token)).expect(200)).body.items as Record<
      string,
      unknown
    >[];
    expect(list.find((o) => o.name === 'admin')).toEqual({
      id: expect.any(String),
      name: 'admin',
      role: 'admin',
      createdAt: expect.any(String),
      revokedAt: null,
    });
    expect(list.find((o) => o.id === alice.id)).toEqual({
      id: alice.id,
      name: 'alice',
      role: 'operator',
      createdAt: alice.createdAt,
      revokedAt: null,
    });
    expect(JSON.stringify(list)).not.toContain('fso_');
  });

  it('revokes an operator: 204, its token is refused at once, a second revocation is 409 (the bootstrap admin: bootstrap-token.e2e-spec.ts)', async () => {
    const bob = await newOperator('admin');
    await call('get', '/admin/v1/operators', bearer(bob.token)).expect(200);
    await call('delete', `/admin/v1/operators/${bob.id}`, bearer(ADMIN_TOKEN)).expect(204);
    await call('get', '/admin/v1/operators', bearer(bob.token)).expect(401);
    const again = await call('delete', `/admin/v1/operators/${bob.id}`, bearer(ADMIN_TOKEN)).expect(409);
    expect(again.body.message).toContain('revoked');
    const listed = (await call('get', '/admin/v1/operators', bearer(ADMIN_TOKEN)).expect(200)).body.items.find(
      (o: { id: string }) => o.id === bob.id,
    );
    expect(listed.revokedAt).toEqual(expect.any(String));

    await call('delete', `/admin/v1/operators/${randomUUID()}`, bearer(ADMIN_TOKEN)).expect(404);
    await call('delete', '/admin/v1/operators/not-a-uuid', bearer(ADMIN_TOKEN)).expect(400);
    await call('get', '/admin/v1/operators', bearer(ADMIN_TOKEN)).expect(200);
  });
});

describe('partner API-key rotation', () => {
  const companies = (key: string) => call('post', '/v1/companies', bearer(key), { name: 'R' });

  it('with an overlap: both keys work until previousKeyExpiresAt; a second rotation drops the first key at once', async () => {
    const p = await createPartner(t, 'Rotating');
    const before = Date.now();
    const res = await call('post', `/admin/v1/partners/${p.id}/rotate-api-key`, bearer(ADMIN_TOKEN), {}).expect(200);
    expect(res.body).toEqual({ apiKey: expect.stringMatching(/^fsk_/), previousKeyExpiresAt: expect.any(String) });
    const expires = Date.parse(res.body.previousKeyExpiresAt);
    expect(Math.abs(expires - before - 24 * 3600_000)).toBeLessThan(60_000);
    await companies(p.apiKey).expect(201);
    await companies(res.body.apiKey).expect(201);

    const two = await call('post', `/admin/v1/partners/${p.id}/rotate-api-key`, bearer(ADMIN_TOKEN), {
      previousKeyValidHours: 1,
    }).expect(200);
    expect(Math.abs(Date.parse(two.body.previousKeyExpiresAt) - Date.now() - 3600_000)).toBeLessThan(60_000);
    await companies(p.apiKey).expect(401);
    await companies(res.body.apiKey).expect(201);
    await companies(two.body.apiKey).expect(201);

    // The overlap ends by PostgreSQL's clock: moved into the past, the previous key is refused.
    await t.sql(`UPDATE partners SET previous_key_expires_at = now() - interval '1 second' WHERE id = $1`, [p.id]);
    await companies(res.body.apiKey).expect(401);
    await companies(two.body.apiKey).expect(201);
  });

  it('with 0: the previous key is refused at once', async () => {
    const p = await createPartner(t, 'Leaked');
    await companies(p.apiKey).expect(201);
    const res = await call('post', `/admin/v1/partners/${p.id}/rotate-api-key`, bearer(ADMIN_TOKEN), {
      previousKeyValidHours: 0,
    }).expect(200);
    expect(Math.abs(Date.parse(res.body.previousKeyExpiresAt) - Date.now())).toBeLessThan(5_000);
    await companies(p.apiKey).expect(401);
    await companies(res.body.apiKey).expect(201);
  });

  it('reads a verified key once per PARTNER_KEY_CACHE_MS: requests in between do not look its partner up again', async () => {
    const p = await createPartner(t, 'Cached');
    const lookups = jest.spyOn(t.app.get(DataSource), 'getRepository');
    const partnerLookups = () => lookups.mock.calls.filter(([entity]) => entity === Partner).length;
    try {
      const since = Date.now();
      for (let i = 0; i < 3; i++) await companies(p.apiKey).expect(201);
      // One read per cache life the three took (one, unless this machine is very slow).
      expect(partnerLookups()).toBeLessThanOrEqual(1 + Math.floor((Date.now() - since) / PARTNER_KEY_CACHE_MS));
      await new Promise((r) => setTimeout(r, PARTNER_KEY_CACHE_MS + 50));
      const before = partnerLookups();
      await companies(p.apiKey).expect(201);
      expect(partnerLookups()).toBe(before + 1);
    } finally {
      lookups.mockRestore();
    }
  });

  it('refuses an overlap outside 0–72 whole hours, an unknown partner, and anyone but an admin', async () => {
    const p = await createPartner(t, 'Strict');
    for (const previousKeyValidHours of [-1, 73, 1.5, '5', null]) {
      const res = await call('post', `/admin/v1/partners/${p.id}/rotate-api-key`, bearer(ADMIN_TOKEN), {
        previousKeyValidHours,
      }).expect(400);
      expect(JSON.stringify(res.body.message)).toContain('previousKeyValidHours');
    }
    await call('post', `/admin/v1/partners/${randomUUID()}/rotate-api-key`, bearer(ADMIN_TOKEN), {}).expect(404);
    const op = await newOperator('operator');
    await call('post', `/admin/v1/partners/${p.id}/rotate-api-key`, bearer(op.token), {}).expect(403);
    await companies(p.apiKey).expect(201);
  });
});

/** Below the partner rate limit's 100 a second, with room for the test's other requests. */
const POLL_MS = 20;

describe('a second process', () => {
  let child: Awaited<ReturnType<typeof startService>> | undefined;
  let base = '';
  beforeAll(async () => {
    buildService();
    const port = await sparePort();
    child = await startService({ ...workerEnv(t), ROLE: 'api', PORT: String(port) });
    base = `http://127.0.0.1:${port}`;
  }, 180_000);
  afterAll(async () => {
    if (child) await stop(child, 'SIGTERM');
  });

  const status = async (path: string, token: string, init: RequestInit = {}) =>
    (
      await fetch(`${base}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
      })
    ).status;

  /**
   * Polls until the child answers `expected`; how long that took after `since`. One check per
   * POLL_MS: a key the child still trusts would otherwise spend the partner's rate limit (100 a
   * second), and its next key would be answered 429.
   */
  async function seenWithin(since: number, check: () => Promise<number>, expected: number): Promise<number> {
    for (;;) {
      if ((await check()) === expected) return Date.now() - since;
      if (Date.now() - since > 5_000) throw new Error(`the second process still did not answer ${expected} after 5 s`);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  it('refuses a revoked operator within a second of the revocation, having just accepted it', async () => {
    const carol = await newOperator('viewer');
    // The second process has just read (and may hold) the token.
    expect(await status('/admin/v1/operators', carol.token)).toBe(200);
    expect(await status('/admin/v1/operators', carol.token)).toBe(200);
    const at = Date.now();
    await call('delete', `/admin/v1/operators/${carol.id}`, bearer(ADMIN_TOKEN)).expect(204);
    const took = await seenWithin(at, () => status('/admin/v1/operators', carol.token), 401);
    expect(took).toBeLessThan(1_000);
    expect(await status('/admin/v1/operators', ADMIN_TOKEN)).toBe(200);
  });

  it('refuses a partner key rotated with 0 within a second, having just accepted it', async () => {
    const p = await createPartner(t, 'Two processes');
    const create = (key: string) =>
      status('/v1/companies', key, { method: 'POST', body: JSON.stringify({ name: 'Q' }) });
    expect(await create(p.apiKey)).toBe(201);
    const at = Date.now();
    const res = await call('post', `/admin/v1/partners/${p.id}/rotate-api-key`, bearer(ADMIN_TOKEN), {
      previousKeyValidHours: 0,
    }).expect(200);
    expect(await seenWithin(at, () => create(p.apiKey), 401)).toBeLessThan(1_000);
    expect(await create(res.body.apiKey)).toBe(201);
  });
});

describe('the audit log', () => {
  type Entry = {
    id: string;
    at: string;
    operator: { id: string; name: string };
    action: string;
    targetType: string;
    targetId: string | null;
    before: object;
    after: object;
  };
  const audit = async (query: string, token = ADMIN_TOKEN) =>
    (await call('get', `/admin/v1/audit${query}`, bearer(token)).expect(200)).body as {
      items: Entry[];
      nextCursor: string | null;
    };

  it('records partner creation, secret and key rotation, operator creation and revocation: who, what, before and after, never a secret', async () => {
    const dave = await newOperator('admin', `dave-${randomUUID().slice(0, 6)}`);
    const p = (await call('post', '/admin/v1/partners', bearer(dave.token), { name: 'Audited Bank' }).expect(201)).body;
    const secret = (
      await call('post', `/admin/v1/partners/${p.id}/rotate-signing-secret`, bearer(dave.token)).expect(200)
    ).body;
    const key = (
      await call('post', `/admin/v1/partners/${p.id}/rotate-api-key`, bearer(dave.token), {
        previousKeyValidHours: 2,
      }).expect(200)
    ).body;
    const erin = await newOperatorAs(dave.token, 'viewer');
    await call('delete', `/admin/v1/operators/${erin.id}`, bearer(dave.token)).expect(204);

    const { items } = await audit(`?operatorId=${dave.id}`);
    const who = { id: dave.id, name: dave.name };
    expect(items.map((e) => e.action)).toEqual([
      'operator.revoke',
      'operator.create',
      'partner.api-key.rotate',
      'partner.signing-secret.rotate',
      'partner.create',
    ]);
    expect(items.every((e) => e.operator.id === who.id && e.operator.name === who.name)).toBe(true);
    expect(items[4]).toMatchObject({
      targetType: 'partner',
      targetId: p.id,
      before: {},
      after: { name: 'Audited Bank' },
    });
    expect(items[3]).toMatchObject({
      targetType: 'partner',
      targetId: p.id,
      before: { signingSecretRotated: false, previousSecretExpiresAt: null },
      after: { signingSecretRotated: true },
    });
    expect(items[2]).toMatchObject({
      targetType: 'partner',
      targetId: p.id,
      before: { apiKeyRotated: false },
      after: { apiKeyRotated: true, previousKeyExpiresAt: key.previousKeyExpiresAt },
    });
    expect(items[1]).toMatchObject({
      targetType: 'operator',
      targetId: erin.id,
      before: {},
      after: { name: erin.name, role: 'viewer' },
    });
    expect(items[0]).toMatchObject({
      targetType: 'operator',
      targetId: erin.id,
      before: { revokedAt: null },
      after: { revokedAt: expect.any(String) },
    });
    const stored = JSON.stringify(await t.sql('SELECT * FROM audit_entries'));
    for (const secretValue of [p.apiKey, p.signingSecret, secret.signingSecret, key.apiKey, erin.token, dave.token])
      expect(stored).not.toContain(secretValue);
    expect(stored).not.toMatch(/whsec_|fsk_|fso_|enc[12]:/);
  });

  it('filters by target and time, pages newest first with a cursor, and refuses bad queries naming the field', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createPartner(t, `Paged ${i}`)).id);
    const one = await audit(`?targetType=partner&targetId=${ids[2]}`);
    expect(one.items.map((e) => [e.action, e.targetId])).toEqual([['partner.create', ids[2]]]);

    const since = (await audit(`?targetType=partner&targetId=${ids[1]}`)).items[0].at;
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: Entry[]; nextCursor: string | null } = await audit(
        `?targetType=partner&since=${encodeURIComponent(since)}&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.filter((e) => e.action === 'partner.create').map((e) => e.targetId!));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...ids.slice(1)].reverse());

    const viewer = await newOperator('viewer');
    expect((await audit('?limit=1', viewer.token)).items).toHaveLength(1);
    for (const [query, field] of [
      ['?limit=0', 'limit'],
      ['?limit=201', 'limit'],
      ['?operatorId=nope', 'operatorId'],
      ['?targetType=planet', 'targetType'],
      ['?since=yesterday', 'since'],
      ['?cursor=abc', 'cursor'],
      ['?color=red', 'color'],
    ]) {
      const res = await call('get', `/admin/v1/audit${query}`, bearer(ADMIN_TOKEN)).expect(400);
      expect(JSON.stringify(res.body.message)).toContain(field);
    }
  });

  it('cannot be changed or deleted: no route does (404), and the table refuses it', async () => {
    const [entry] = (await audit('?limit=1')).items;
    for (const method of ['put', 'patch', 'delete'] as const) {
      await call(
        method,
        `/admin/v1/audit/${entry.id}`,
        bearer(ADMIN_TOKEN),
        method === 'delete' ? undefined : { action: 'x' },
      ).expect(404);
      await call(
        method,
        '/admin/v1/audit',
        bearer(ADMIN_TOKEN),
        method === 'delete' ? undefined : { action: 'x' },
      ).expect(404);
    }
    await expect(t.sql(`UPDATE audit_entries SET action = 'x' WHERE id = $1`, [entry.id])).rejects.toThrow(
      /cannot be changed or deleted/,
    );
    await expect(t.sql(`DELETE FROM audit_entries WHERE id = $1`, [entry.id])).rejects.toThrow(
      /cannot be changed or deleted/,
    );
    expect((await audit('?limit=1')).items[0]).toEqual(entry);
  });
});

async function newOperatorAs(token: string, role: OperatorRole) {
  const res = await call('post', '/admin/v1/operators', bearer(token), {
    name: `${role}-${randomUUID().slice(0, 8)}`,
    role,
  }).expect(201);
  return res.body as { id: string; name: string; token: string };
}

describe('the queue dashboard', () => {
  const basic = (name: string, token: string) => `Basic ${Buffer.from(`${name}:${token}`).toString('base64')}`;
  let ops: Record<OperatorRole, { id: string; name: string; token: string }>;
  beforeAll(async () => {
    ops = {
      viewer: await newOperator('viewer'),
      operator: await newOperator('operator'),
      admin: await newOperator('admin'),
    };
  });

  it('walks every dashboard route bull-board serves: unknown 401 (with the Basic prompt), a viewer reads but every action is 403, an operator acts', async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { appRoutes } = require('@bull-board/api/dist/routes.js') as {
      appRoutes: { entryPoint: { route: string[] }; api: { method: Method; route: string }[] };
    };
    const routes = [
      ...appRoutes.entryPoint.route.map((route) => ({ method: 'get' as const, route })),
      ...appRoutes.api,
    ];
    expect(routes.filter((r) => r.method !== 'get').length).toBeGreaterThanOrEqual(20);
    const fill = (route: string) =>
      `/admin/queues${route === '/' ? '' : route}`.replace(
        /:(\w+)/g,
        (_, name: string) => ({ queueName: 'callbacks', queueStatus: 'completed' })[name] ?? randomUUID(),
      );
    const before = await auditCount();
    const problems: string[] = [];
    for (const r of routes) {
      const path = fill(r.route);
      const body = r.method === 'get' ? undefined : {};
      const unknown = await call(r.method, path, basic('nobody', 'fso_unknown'), body);
      if (unknown.status !== 401 || !String(unknown.headers['www-authenticate']).startsWith('Basic '))
        problems.push(`${r.method} ${r.route}: unknown → ${unknown.status}`);
      for (const role of OPERATOR_ROLES) {
        for (const auth of [basic(ops[role].name, ops[role].token), bearer(ops[role].token)]) {
          const res = await call(r.method, path, auth, body);
          const allowed = r.method === 'get' || role !== 'viewer';
          if (allowed && [401, 403].includes(res.status))
            problems.push(`${r.method} ${r.route}: ${role} → ${res.status}`);
          if (!allowed && res.status !== 403)
            problems.push(`${r.method} ${r.route}: ${role} → ${res.status}, expected 403`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(await auditCount()).toBe(before); // nothing to retry or promote in this database yet
  }, 120_000);

  it("logs in with the operator's name and token: another name, a revoked operator or a wrong token is 401", async () => {
    const page = (auth: string) => call('get', '/admin/queues', auth);
    await page(basic('admin', ADMIN_TOKEN)).expect(200);
    await page(basic(ops.viewer.name, ops.viewer.token)).expect(200);
    await page(basic(ops.operator.name, ops.viewer.token)).expect(401);
    await page(basic('admin', ops.viewer.token)).expect(401);
    await page(basic(ops.viewer.name, `${ops.viewer.token}x`)).expect(401);
    const gone = await newOperator('operator');
    await page(basic(gone.name, gone.token)).expect(200);
    await call('delete', `/admin/v1/operators/${gone.id}`, bearer(ADMIN_TOKEN)).expect(204);
    await page(basic(gone.name, gone.token)).expect(401);
  });

  it('Retry, Promote, Retry all and Promote all each write an entry naming the operator; a refused or switched-off action none', async () => {
    const p = await createPartner(t, 'Dashboard Bank');
    const c = (await call('post', '/v1/companies', bearer(p.apiKey), { name: 'D' }).expect(201)).body.id as string;
    // A dead letter and two delayed callbacks, to an address nothing listens on.
    const insert = (status: string, next: string) =>
      t.sql<{ id: string }>(
        `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at, last_error)
         VALUES ($1, $2, 0, 'http://127.0.0.1:9/cb', '{}', $3, ${next}, 'HTTP 410') RETURNING id`,
        [p.id, c, status],
      );
    const [{ id: dead }] = await insert('failed', 'NULL');
    const [{ id: later }] = await insert('pending', `now() + interval '1 hour'`);
    const [{ id: later2 }] = await insert('pending', `now() + interval '2 hours'`);
    const board = (auth: string, path: string) => call('put', `/admin/queues/api/queues/callbacks${path}`, auth);
    const op = basic(ops.operator.name, ops.operator.token);
    const mine = async () =>
      (
        await call('get', `/admin/v1/audit?operatorId=${ops.operator.id}`, bearer(ADMIN_TOKEN)).expect(200)
      ).body.items.map((e: { action: string; targetId: string | null; before: object; after: object }) => [
        e.action,
        e.targetId,
        e.after,
      ]);

    await board(basic(ops.viewer.name, ops.viewer.token), `/${dead}/retry`).expect(403);
    await board(op, `/${later}/retry`).expect(405); // not failed: switched off
    await board(op, `/${dead}/clean`).expect(405);
    expect(await mine()).toEqual([]);

    await board(op, `/${dead}/retry`).expect(204);
    expect(await mine()).toEqual([
      ['callback.redeliver', dead, { status: 'pending', nextAttemptAt: expect.any(String) }],
    ]);
    await board(op, `/${later}/promote`).expect(204);
    await board(op, `/${later}/promote`).expect(405); // due now: no longer delayed
    const promoted = await mine();
    expect(promoted[0]).toEqual(['callback.promote', later, { nextAttemptAt: expect.any(String) }]);
    expect(promoted).toHaveLength(2);

    await t.sql(`UPDATE callbacks SET status = 'failed', next_attempt_at = NULL WHERE id = $1`, [dead]);
    expect((await board(op, '/retry/failed').expect(200)).body).toEqual({ retried: 1, skipped: 0 });
    await board(op, '/promote').expect(200);
    const all = await mine();
    expect(all.slice(0, 2)).toEqual([
      ['callback.promote', null, { count: expect.any(Number) }], // later2, and the redelivered one if its attempt failed meanwhile
      [
        'callback.redeliver-failed',
        null,
        { status: 'pending', count: 1, since: null, until: null, partnerId: null, companyId: null, destination: null },
      ],
    ]);
    expect(
      (
        await t.sql<{ next: boolean }>('SELECT next_attempt_at <= now() AS next FROM callbacks WHERE id = $1', [later2])
      )[0].next,
    ).toBe(true);

    // Promote all counts its page even when one callback is on it: its entry never names one.
    await until(
      async () => {
        await t.sql(`UPDATE callbacks SET status = 'failed', next_attempt_at = NULL WHERE status = 'pending'`);
        const [{ n }] = await t.sql<{ n: number }>(
          `SELECT count(*)::int AS n FROM callbacks WHERE status IN ('pending', 'sending')`,
        );
        return n === 0;
      },
      { what: 'no callback pending or in flight' },
    );
    await insert('pending', `now() + interval '1 hour'`);
    await board(op, '/promote').expect(200);
    expect((await mine())[0]).toEqual(['callback.promote', null, { count: 1 }]);
  });
});
