/**
 * The portal's door as an attacker tries it (docs/security.md, "The partner portal is a browser
 * page too"): a link's page and HEAD use nothing, only a same-origin Sign in does; revocations end
 * unused links; a shadowing cookie changes no one's session; every answer under /portal carries
 * the portal's headers; an operator's session is audited naming the operator; the rate limits.
 * The same in Chromium, across two origins: portal-sign-in-browser.e2e-spec.ts.
 */
import type { Response, Test } from 'supertest';
import { PARTNER_RATE_LIMIT } from '../src/partners/rate-limiter.js';
import { companyWithCallback, createPartner, harness, TestApp } from './support/harness.js';
import { csrfOf, linkTarget, linkToken, portalLink, pressSignIn, signInWith } from './support/portal.js';

type AuditItem = {
  action: string;
  operator: { id: string; name: string };
  targetType: string;
  targetId: string | null;
  before: object;
  after: object;
};

/** The portal's own headers, on any answer under /portal (a page, unless the router refused the path first). */
function expectPortalHeaders(res: Response, what: string, page = true): void {
  const csp = String(res.headers['content-security-policy']);
  expect(`${what}: ${csp}`).toContain("frame-ancestors 'none'");
  expect(`${what}: ${csp}`).toContain("script-src 'self'");
  expect(`${what}: ${csp}`).not.toMatch(/unsafe-(inline|eval)/);
  expect(`${what}: ${res.headers['cache-control']}`).toBe(`${what}: no-store`);
  expect(`${what}: ${res.headers['referrer-policy']}`).toBe(`${what}: no-referrer`);
  expect(`${what}: ${res.headers['x-frame-options']}`).toBe(`${what}: DENY`);
  expect(`${what}: ${res.headers['x-content-type-options']}`).toBe(`${what}: nosniff`);
  if (page) expect(`${what}: ${res.headers['content-type']}`).toMatch(/: text\/html/);
}

const linkRow = async (t: TestApp, url: string) =>
  (
    await t.sql<{ used: boolean; ended: boolean }>(
      `SELECT used_at IS NOT NULL AS used, ended_at IS NOT NULL AS ended
         FROM portal_links WHERE token_hash = encode(sha256($1::bytea), 'hex')`,
      [linkToken(url)],
    )
  )[0];

describe('the portal sign-in', () => {
  const e2e = harness({ ROLE: 'api' });
  let t: TestApp;
  beforeAll(() => ({ t } = e2e));

  it("a link's page names the partner with a Sign in button, using nothing, nor does HEAD; Sign in does", async () => {
    const { url } = await portalLink(t, e2e.p.apiKey);
    for (let i = 0; i < 2; i++) {
      const page = await t.http().get(linkTarget(url)).expect(200);
      expect(page.headers['set-cookie']).toBeUndefined();
      expect(page.text).toContain('Acme Bank');
      expect(page.text).toMatch(/<form method="post" action="\/portal\/login">/);
      expect(page.text).toContain(`name="token" value="${linkToken(url)}"`);
      const head = await t.http().head(linkTarget(url)).expect(200);
      expect(head.headers['set-cookie']).toBeUndefined();
    }
    expect(await linkRow(t, url)).toEqual({ used: false, ended: false });
    const cookie = await signInWith(t, url);
    await t.http().get('/portal').set('Cookie', cookie).expect(200);
    expect(await linkRow(t, url)).toEqual({ used: true, ended: false });
    expect((await t.http().head(linkTarget(url)).expect(410)).headers['set-cookie']).toBeUndefined();
  });

  it('a Sign in from another site, or silent on its origin, is refused 403; from the portal it opens', async () => {
    const { url } = await portalLink(t, e2e.p.apiKey);
    const host = new URL(t.config.portalBaseUrl).host;
    const refused: Record<string, string>[] = [
      { 'Sec-Fetch-Site': 'cross-site' },
      { 'Sec-Fetch-Site': 'same-site' },
      { 'Sec-Fetch-Site': 'cross-site', Origin: `http://${host}` },
      { Origin: 'http://evil.example' },
      { Origin: 'null' },
      {},
    ];
    for (const headers of refused) {
      const res = await pressSignIn(t, linkToken(url), headers).expect(403);
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(res.text).toContain('nothing was used');
      expectPortalHeaders(res, JSON.stringify(headers));
    }
    expect(await linkRow(t, url)).toEqual({ used: false, ended: false });
    // A browser that sends no Sec-Fetch-Site: its Origin is this host.
    const res = await t
      .http()
      .post('/portal/login')
      .set({ Origin: 'http://portal.example', Host: 'Portal.Example' })
      .type('form')
      .send({ token: linkToken(url) })
      .expect(303);
    expect(String(res.headers['set-cookie'])).toMatch(/^portal_session=fss_/);
  });

  it('a used, expired, ended or unknown link opens nothing on GET and POST alike, with a page saying why', async () => {
    await pressSignIn(t, 'fsp_nothing').expect(404);
    await pressSignIn(t, '').expect(404);
    await t.http().get('/portal/login?token=fsp_nothing').expect(404);
    // Given twice: refused by name, nothing used.
    const { url } = await portalLink(t, e2e.p.apiKey);
    const twice = await t
      .http()
      .get(`${linkTarget(url)}&token=${linkToken(url)}`)
      .expect(400);
    expect(twice.text).toContain('token is given more than once');
    expect(await linkRow(t, url)).toEqual({ used: false, ended: false });
  });

  it('unused links end with the sessions (a 0-hour rotation, DELETE …/portal-sessions); an overlap: none', async () => {
    const p = await createPartner(t, 'Leaky Bank');
    const byPartner = (await portalLink(t, p.apiKey)).url;
    const byOperator = (await t.admin('post', `/admin/v1/partners/${p.id}/portal-links`, {}).expect(201)).body
      .url as string;
    const session = await signInWith(t, (await portalLink(t, p.apiKey)).url);
    await t.admin('post', `/admin/v1/partners/${p.id}/rotate-api-key`, { previousKeyValidHours: 1 }).expect(200);
    expect(await linkRow(t, byPartner)).toEqual({ used: false, ended: false });
    const { apiKey } = (
      await t.admin('post', `/admin/v1/partners/${p.id}/rotate-api-key`, { previousKeyValidHours: 0 }).expect(200)
    ).body;
    for (const url of [byPartner, byOperator]) {
      expect((await t.http().get(linkTarget(url)).expect(410)).text).toContain('was ended with your portal sessions');
      expect((await pressSignIn(t, linkToken(url)).expect(410)).headers['set-cookie']).toBeUndefined();
      expect(await linkRow(t, url)).toEqual({ used: false, ended: true });
    }
    await t.http().get('/portal').set('Cookie', session).expect(401);
    // A link made afterwards opens; then DELETE …/portal-sessions ends the next unused one and the session.
    const next = await signInWith(t, (await portalLink(t, apiKey)).url);
    const unused = (await portalLink(t, apiKey)).url;
    await t.admin('delete', `/admin/v1/partners/${p.id}/portal-sessions`).expect(204);
    await t.http().get('/portal').set('Cookie', next).expect(401);
    await pressSignIn(t, linkToken(unused)).expect(410);
    const [entry] = (await t.admin('get', `/admin/v1/audit?targetId=${p.id}&limit=1`).expect(200)).body
      .items as AuditItem[];
    expect(entry).toMatchObject({
      action: 'partner.portal-sessions.end',
      after: { portalSessionsEnded: 1, portalLinksEnded: 1 },
    });
  });

  it('revoking the operator who made a link ends the link and the sessions it opened', async () => {
    const op = (
      await t.admin('post', '/admin/v1/operators', { name: 'leaving-operator', role: 'operator' }).expect(201)
    ).body;
    const make = async () =>
      (await t.as(op.token, 'post', `/admin/v1/partners/${e2e.p.id}/portal-links`, {}).expect(201)).body.url as string;
    const session = await signInWith(t, await make());
    const unused = await make();
    await t.http().get('/portal').set('Cookie', session).expect(200);
    await t.admin('delete', `/admin/v1/operators/${op.id}`).expect(204);
    await t.http().get('/portal').set('Cookie', session).expect(401);
    expect((await t.http().get(linkTarget(unused)).expect(410)).text).toContain('the operator who made it was removed');
  });

  it("a session cookie beside the browser's: a made-up one is ignored, two live sessions are neither", async () => {
    const mine = await signInWith(t, (await portalLink(t, e2e.p.apiKey)).url);
    for (const cookie of [
      `${mine}; portal_session=fss_bogus`,
      `portal_session=fss_bogus; ${mine}`,
      `portal_session=; ${mine}`,
    ]) {
      await t.http().get('/portal').set('Cookie', cookie).expect(200);
    }
    const other = await createPartner(t, 'Attacker Bank');
    const theirs = await signInWith(t, (await portalLink(t, other.apiKey)).url);
    for (const cookie of [`${theirs}; ${mine}`, `${mine}; ${theirs}`])
      await t.http().get('/portal').set('Cookie', cookie).expect(401);
    expect((await t.http().get('/portal').set('Cookie', mine).expect(200)).text).toContain('Acme Bank');
  });

  it('answers any other path or method under /portal (404, OPTIONS, PUT) as a page with its headers', async () => {
    const cookie = await signInWith(t, (await portalLink(t, e2e.p.apiKey)).url);
    const tries: [string, string, string | undefined][] = [
      ['get', '/portal/nothing', undefined],
      ['options', '/portal', undefined],
      ['options', '/portal/login', undefined],
      ['put', '/portal/settings', cookie],
      ['delete', '/portal/callbacks', cookie],
      ['get', '/portal/nothing', cookie],
    ];
    for (const [method, path, withCookie] of tries) {
      const req = (t.http() as unknown as Record<string, (p: string) => Test>)[method](path);
      const res = await (withCookie ? req.set('Cookie', withCookie) : req).expect(404);
      expectPortalHeaders(res, `${method} ${path}`);
      if (method !== 'options') expect(res.text).toContain('The portal has no page here.');
    }
    // Spellings the router reads as /portal but the portal's own 404 does not take, and a path it cannot decode.
    expectPortalHeaders(await t.http().get('/PORTAL/nothing').expect(404), '/PORTAL/nothing', false);
    expectPortalHeaders(await t.http().get('/portal/%zz').expect(400), '/portal/%zz', false);
    // The API keeps its JSON 404 without the portal's policy.
    expect((await t.http().get('/v1/nothing').expect(404)).headers['content-security-policy']).toBeUndefined();
  });

  it("a refused test callback's 429 page sends the Retry-After it promises", async () => {
    const cookie = await signInWith(t, (await portalLink(t, e2e.p.apiKey)).url);
    const { c } = await companyWithCallback(t, e2e.p, 'http://127.0.0.1:9/hook');
    for (let i = 0; i < 10; i++) await t.as(e2e.p.apiKey, 'post', '/v1/callbacks/test', { companyId: c }).expect(202);
    const res = await t
      .http()
      .post('/portal/test')
      .set('Cookie', cookie)
      .type('form')
      .send({ _csrf: await csrfOf(t, cookie, '/portal/test'), companyId: c })
      .expect(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(res.text).toContain('Retry-After');
  });
});

describe("an operator's portal session, audited", () => {
  const e2e = harness({ ROLE: 'api' }, { partner: 'Audited Bank' });
  let t: TestApp;
  beforeAll(() => ({ t } = e2e));

  /**
   * Every action of the portal, in the session of this cookie: each answers 303 but a key change,
   * whose page shows the new key (200). `move`: the URL moved from and to; `scheme`: switched to.
   */
  async function act(cookie: string, company: string, callback: string, move: [string, string], scheme: string) {
    const send = async (path: string, form: Record<string, string>, status = 303) =>
      t
        .http()
        .post(path)
        .set('Cookie', cookie)
        .type('form')
        .send({ ...form, _csrf: await csrfOf(t, cookie, '/portal/settings') })
        .expect(status);
    const hour = (offset: number) => new Date(Date.now() + offset).toISOString().slice(0, 16);
    await send(`/portal/callbacks/${callback}/redeliver`, {});
    await send('/portal/replay', { from: hour(-3_600_000), to: hour(3_600_000) });
    await send('/portal/test', { companyId: company, url: 'http://127.0.0.1:9/test?token=receiver-secret' });
    await send('/portal/settings', { operationsUrl: 'http://127.0.0.1:9/ops?token=ops-secret' });
    await send('/portal/settings/test-event', {});
    await send('/portal/urls/move', { from: move[0], to: move[1] });
    await send('/portal/settings/roll-secret', { shownAt: new Date().toISOString() }, 200);
    await send('/portal/settings/signature-scheme', { scheme }, 200);
    await send('/portal/logout', {});
  }

  it("an entry naming the operator for each action, sign-in to sign-out; none in the partner's own", async () => {
    const op = (await t.admin('post', '/admin/v1/operators', { name: 'support-alice', role: 'operator' }).expect(201))
      .body;
    const { c, change } = await companyWithCallback(t, e2e.p, 'http://127.0.0.1:9/hook');
    const callback = await change();
    await t.sql(`UPDATE callbacks SET status = 'failed', next_attempt_at = NULL WHERE id <> $1 AND company_id = $2`, [
      callback,
      c,
    ]);
    await change();
    await t.sql(`UPDATE callbacks SET status = 'failed', next_attempt_at = NULL WHERE id <> $1 AND company_id = $2`, [
      callback,
      c,
    ]);

    const link = (await t.as(op.token, 'post', `/admin/v1/partners/${e2e.p.id}/portal-links`, {}).expect(201)).body
      .url as string;
    const cookie = await signInWith(t, link);
    // A refused action writes nothing.
    const token = await csrfOf(t, cookie);
    await t
      .http()
      .post('/portal/callbacks/00000000-0000-4000-8000-000000000000/redeliver')
      .set('Cookie', cookie)
      .type('form')
      .send({ _csrf: token })
      .expect(404);
    await t
      .http()
      .post('/portal/settings')
      .set('Cookie', cookie)
      .type('form')
      .send({ _csrf: token, operationsUrl: 'ftp://x' })
      .expect(400);
    const [hook, moved] = ['http://127.0.0.1:9/hook', 'http://127.0.0.1:9/moved?token=url-secret'];
    await act(cookie, c, callback, [hook, moved], 'ed25519');

    const items = (await t.admin('get', `/admin/v1/audit?operatorId=${op.id}`).expect(200)).body.items as AuditItem[];
    expect(items.map((i) => i.action)).toEqual([
      'portal.session.end',
      'portal.signature-scheme.switch',
      'portal.signing-secret.rotate',
      'portal.callback-urls.move',
      'portal.test-event.send',
      'portal.operations-url.set',
      'portal.test-callback.send',
      'portal.callback.redeliver-failed',
      'portal.callback.redeliver',
      'portal.session.open',
      'partner.portal-link.create',
    ]);
    expect(items.every((i) => i.operator.name === 'support-alice')).toBe(true);
    const by = Object.fromEntries(items.map((i) => [i.action, i]));
    expect(by['portal.callback.redeliver']).toMatchObject({ targetType: 'callback', targetId: callback });
    expect(by['portal.callback.redeliver-failed']).toMatchObject({
      targetType: 'callback',
      after: { count: 1, partnerId: e2e.p.id },
    });
    expect(by['portal.test-callback.send']).toMatchObject({
      targetType: 'callback',
      after: { status: 'pending', destination: 'http://127.0.0.1:9' },
    });
    expect(by['portal.operations-url.set']).toMatchObject({
      targetId: e2e.p.id,
      before: { operationsOrigin: null },
      after: { operationsOrigin: 'http://127.0.0.1:9' },
    });
    const [sent] = await t.sql<{ id: string }>(
      'SELECT id FROM callbacks WHERE test AND event_type IS NULL ORDER BY seq DESC LIMIT 1',
    );
    expect(by['portal.test-callback.send'].targetId).toBe(sent.id);
    expect(by['portal.session.end'].before).toEqual({
      portalSession: (by['portal.session.open'].after as { portalSession: string }).portalSession,
    });
    expect(by['portal.test-event.send']).toMatchObject({
      targetId: e2e.p.id,
      after: { status: 'pending', destination: 'http://127.0.0.1:9' },
    });
    expect(by['portal.callback-urls.move']).toMatchObject({
      targetId: e2e.p.id,
      after: { fromOrigin: 'http://127.0.0.1:9', toOrigin: 'http://127.0.0.1:9', resources: 1 },
    });
    expect(by['portal.signature-scheme.switch']).toMatchObject({ after: { signatureScheme: 'ed25519' } });
    // Never a URL's path or query, nor a key.
    const changes = JSON.stringify(items.map((i) => [i.before, i.after]));
    expect(changes).not.toMatch(/token=|\/test|\/ops|\/hook|\/moved|whsec_|whsk_/);

    // The partner's own session does the same: no entry in the operators' audit; its key changes
    // are audited as its API's are, the partner as actor.
    const [{ n: before }] = await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM audit_entries');
    await t.sql(`UPDATE callbacks SET status = 'failed', next_attempt_at = NULL WHERE id <> $1 AND company_id = $2`, [
      callback,
      c,
    ]);
    await act(await signInWith(t, (await portalLink(t, e2e.p.apiKey)).url), c, callback, [moved, hook], 'hmac-sha256');
    const own = await t.sql<{ action: string; operator_id: string | null; partner_id: string }>(
      'SELECT action, operator_id, partner_id FROM audit_entries ORDER BY seq OFFSET $1',
      [before],
    );
    expect(own).toEqual([
      { action: 'partner.signing-secret.rotate', operator_id: null, partner_id: e2e.p.id },
      { action: 'partner.signature-scheme.switch', operator_id: null, partner_id: e2e.p.id },
    ]);
  });
});

describe('the portal rate limits', () => {
  const LIMIT = 8;
  const e2e = harness(
    { ROLE: 'api' },
    { configure: (b) => b.overrideProvider(PARTNER_RATE_LIMIT).useValue(LIMIT), partner: 'Busy Bank' },
  );
  let t: TestApp;
  beforeAll(() => ({ t } = e2e));

  /** `n` requests at once; those refused 429. */
  const burst = async (n: number, send: () => Promise<Response>) =>
    (await Promise.all(Array.from({ length: n }, send))).filter((r) => r.status === 429);

  it("a partner's sessions meet a 429 page with Retry-After; its API calls, other partners count apart", async () => {
    const cookie = await signInWith(t, (await portalLink(t, e2e.p.apiKey)).url);
    const other = await createPartner(t, 'Calm Bank');
    const calm = await signInWith(t, (await portalLink(t, other.apiKey)).url);
    // 30 at once fall into at most two one-second windows of 8: at least 14 are refused.
    const limited = await burst(30, () => t.http().get('/portal/callbacks').set('Cookie', cookie));
    expect(limited.length).toBeGreaterThanOrEqual(14);
    expect(limited[0].headers['retry-after']).toBe('1');
    expect(limited[0].text).toContain('Too many requests');
    expectPortalHeaders(limited[0], 'the 429 page');
    await t.http().get('/portal').set('Cookie', calm).expect(200);
    await t.as(e2e.p.apiKey, 'get', '/v1/partner').expect(200);
  });

  it('requests without a session (the sign-in page, the 401 page) are limited per client address', async () => {
    const { url } = await portalLink(t, e2e.p.apiKey);
    const limited = await burst(30, () => t.http().get(linkTarget(url)));
    expect(limited.length).toBeGreaterThanOrEqual(14);
    expect(limited[0].headers['retry-after']).toBe('1');
    expectPortalHeaders(limited[0], 'the 429 page');
    expect((await burst(30, () => t.http().get('/portal'))).length).toBeGreaterThanOrEqual(14);
  });
});
