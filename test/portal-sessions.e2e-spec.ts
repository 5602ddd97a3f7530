/**
 * The partner portal's door: one-time links (partner and operator), the session cookie, its ends
 * (idle, age, sign-out, an operator's DELETE, an API-key rotation without overlap), the 401 page,
 * the page headers, and CSRF on every action. The browser's walk through the pages is
 * portal-browser.e2e-spec.ts.
 */
import { Client } from 'pg';
import { storeStatement } from '../src/callbacks/store/statements.js';
import { PLANNER_SETTINGS } from '../src/platform/database/database.js';
import { hashToken } from '../src/platform/crypto/tokens.js';
import { PlanNode, scansOf } from './support/plans.js';
import { PartnerActivityReads } from '../src/callbacks/partner-activity.js';
import { ADMIN_TOKEN, createPartner, harness, TestApp } from './support/harness.js';
import { csrfOf, linkTarget as target, linkToken, portalLink as link } from './support/portal.js';
import { pressSignIn, signInWith } from './support/portal.js';

const e2e = harness({ ROLE: 'api' });

/** Follows a new link and signs in: the session's cookie header. */
async function signIn(t: TestApp, apiKey: string): Promise<string> {
  return signInWith(t, (await link(t, apiKey)).url);
}

describe('partner portal links and sessions', () => {
  let t: TestApp;
  let apiKey: string;
  let partnerId: string;
  beforeAll(() => {
    t = e2e.t;
    apiKey = e2e.p.apiKey;
    partnerId = e2e.p.id;
  });

  it('a partner link is one-time, at PORTAL_BASE_URL, stored hashed, and opens a session with a strict cookie (not Secure: the base URL is http)', async () => {
    const before = Date.now();
    const { url, expiresAt } = await link(t, apiKey);
    expect(url).toMatch(new RegExp(`^${t.config.portalBaseUrl}/portal/login\\?token=fsp_[A-Za-z0-9_-]{43}$`));
    expect(Date.parse(expiresAt) - before).toBeGreaterThan(14 * 60_000);
    expect(Date.parse(expiresAt) - before).toBeLessThan(16 * 60_000);
    const token = linkToken(url);
    const stored = await t.sql<Record<string, unknown>>('SELECT * FROM portal_links');
    expect(JSON.stringify(stored)).not.toContain(token);
    // The link's page names the partner and sets nothing; its Sign in opens the session.
    const page = await t.http().get(target(url)).expect(200);
    expect(page.headers['set-cookie']).toBeUndefined();
    expect(page.text).toContain('Acme Bank');
    const res = await pressSignIn(t, token).expect(303);
    const cookie = String(res.headers['set-cookie']);
    expect(cookie).toMatch(/^portal_session=fss_[A-Za-z0-9_-]+;/);
    expect(cookie).toMatch(/; Path=\/portal/);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Strict/);
    expect(cookie).not.toMatch(/Secure/);
    const sessions = await t.sql<Record<string, unknown>>('SELECT * FROM portal_sessions');
    expect(JSON.stringify(sessions)).not.toContain(cookie.split(';')[0].split('=')[1]);
    // The second use, an unknown token and an expired link open nothing, with a page saying so.
    const again = await pressSignIn(t, token).expect(410);
    expect(again.headers['set-cookie']).toBeUndefined();
    expect(again.text).toContain('used already');
    expect((await t.http().get(target(url)).expect(410)).text).toContain('used already');
    expect((await t.http().get('/portal/login?token=fsp_nothing').expect(404)).text).toContain('not a sign-in link');
    expect((await t.http().get('/portal/login').expect(404)).headers['set-cookie']).toBeUndefined();
    const late = await link(t, apiKey, { ttlMinutes: 1 });
    const lateHash = hashToken(new URL(late.url).searchParams.get('token')!);
    await t.sql(`UPDATE portal_links SET expires_at = now() - interval '1 second' WHERE token_hash = $1`, [lateHash]);
    expect((await t.http().get(target(late.url)).expect(410)).text).toContain('expired');
    expect((await pressSignIn(t, linkToken(late.url)).expect(410)).text).toContain('expired');
  });

  it('refuses a ttlMinutes outside 1–60 and other properties, naming them', async () => {
    for (const body of [{ ttlMinutes: 0 }, { ttlMinutes: 61 }, { ttlMinutes: '5' }, { ttl: 5 }]) {
      const res = await t.as(apiKey, 'post', '/v1/partner/portal-links', body).expect(400);
      expect(JSON.stringify(res.body.message)).toMatch(/ttl/);
    }
    const { expiresAt } = await link(t, apiKey, { ttlMinutes: 60 });
    expect(Date.parse(expiresAt) - Date.now()).toBeGreaterThan(59 * 60_000);
  });

  it('without a session every portal page answers 401 with a page saying how to get a link', async () => {
    for (const path of ['/portal', '/portal/callbacks', '/portal/settings', '/PORTAL/%73ettings']) {
      const res = await t.http().get(path).set('Cookie', 'portal_session=fss_made-up').expect(401);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).toContain('POST /v1/partner/portal-links');
      expect(res.headers['cache-control']).toBe('no-store');
    }
    // A browser sent here from another site (an email's link) reloads once from this site, so its strict cookie goes along.
    const crossSite = await t
      .http()
      .get('/portal')
      .set({ 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'navigate' })
      .expect(401);
    expect(crossSite.text).toContain('<meta http-equiv="refresh" content="0">');
    expect(
      (await t.http().get('/portal').set({ 'Sec-Fetch-Site': 'same-origin', 'Sec-Fetch-Mode': 'navigate' }).expect(401))
        .text,
    ).not.toContain('refresh');
    // An API key is no portal credential.
    await t.http().get('/portal').set('Authorization', `Bearer ${apiKey}`).expect(401);
  });

  it('serves pages with the portal headers: a CSP without inline scripts, no framing, no cache, no referrer', async () => {
    const cookie = await signIn(t, apiKey);
    const res = await t.http().get('/portal').set('Cookie', cookie).expect(200);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'self'");
    expect(csp).not.toMatch(/unsafe-(inline|eval)/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['x-frame-options']).toBe('DENY');
    // The API keeps its own headers: the portal's policy is scoped to /portal.
    const api = await t.as(apiKey, 'get', '/v1/partner').expect(200);
    expect(api.headers['content-security-policy']).toBeUndefined();
  });

  it('a POST without the session CSRF token is refused 403 and changes nothing; with it, 303', async () => {
    const cookie = await signIn(t, apiKey);
    const other = await signIn(t, apiKey);
    const form = (extra: string) =>
      t
        .http()
        .post('/portal/settings')
        .set('Cookie', cookie)
        .type('form')
        .send(`operationsUrl=http%3A%2F%2F127.0.0.1%3A9%2Fops${extra}`);
    expect((await form('').expect(403)).text).toContain('Nothing was changed');
    await form('&_csrf=forged').expect(403);
    // Another session's token is not this session's.
    await form(`&_csrf=${encodeURIComponent(await csrfOf(t, other))}`).expect(403);
    const [{ operations_url }] = await t.sql<{ operations_url: string | null }>(
      'SELECT operations_url FROM partners WHERE id = $1',
      [partnerId],
    );
    expect(operations_url).toBeNull();
    const done = await form(`&_csrf=${encodeURIComponent(await csrfOf(t, cookie))}`).expect(303);
    expect(done.headers.location).toBe('/portal/settings?done=saved');
    expect((await t.sql('SELECT operations_url FROM partners WHERE id = $1', [partnerId]))[0]).toEqual({
      operations_url: 'http://127.0.0.1:9/ops',
    });
  });

  it("another partner's callback id answers 404, as in the API", async () => {
    const other = await createPartner(t, 'Other Bank');
    const company = (
      await t
        .as(other.apiKey, 'post', '/v1/companies', { name: 'Theirs', status_callback: 'http://127.0.0.1:9/c' })
        .expect(201)
    ).body.id as string;
    await t.admin('patch', `/admin/v1/companies/${company}/credit`, { repaymentTermDays: 3 }).expect(200);
    const [{ id }] = await t.sql<{ id: string }>('SELECT id FROM callbacks WHERE company_id = $1', [company]);
    const cookie = await signIn(t, apiKey);
    await t.http().get(`/portal/callbacks/${id}`).set('Cookie', cookie).expect(404);
    const token = await csrfOf(t, cookie);
    await t
      .http()
      .post(`/portal/callbacks/${id}/redeliver`)
      .set('Cookie', cookie)
      .type('form')
      .send({ _csrf: token })
      .expect(404);
    await t.http().get('/portal/callbacks/not-an-id').set('Cookie', cookie).expect(400);
  });

  it('ends a session after 30 minutes idle, after 8 hours, and on Sign out', async () => {
    const idle = await signIn(t, apiKey);
    const old = await signIn(t, apiKey);
    await t.sql(
      `UPDATE portal_sessions SET last_seen_at = now() - interval '31 minutes' WHERE id = (SELECT id FROM portal_sessions ORDER BY created_at DESC OFFSET 1 LIMIT 1)`,
    );
    await t.sql(
      `UPDATE portal_sessions SET created_at = now() - interval '8 hours 1 minute' WHERE id = (SELECT id FROM portal_sessions ORDER BY created_at DESC LIMIT 1)`,
    );
    await t.http().get('/portal').set('Cookie', idle).expect(401);
    await t.http().get('/portal').set('Cookie', old).expect(401);
    const cookie = await signIn(t, apiKey);
    const out = await t
      .http()
      .post('/portal/logout')
      .set('Cookie', cookie)
      .type('form')
      .send({ _csrf: await csrfOf(t, cookie) })
      .expect(303);
    expect(out.headers.location).toBe('/portal/signed-out');
    expect(String(out.headers['set-cookie'])).toMatch(/^portal_session=;/);
    await t.http().get('/portal').set('Cookie', cookie).expect(401);
  });

  it("an operator's link is audited; DELETE …/portal-sessions ends every session of the partner at once, audited", async () => {
    const viewer = (await t.admin('post', '/admin/v1/operators', { name: 'portal-viewer', role: 'viewer' }).expect(201))
      .body.token as string;
    await t.as(viewer, 'post', `/admin/v1/partners/${partnerId}/portal-links`, {}).expect(403);
    await t.admin('post', '/admin/v1/partners/00000000-0000-4000-8000-000000000000/portal-links', {}).expect(404);
    const made = (await t.admin('post', `/admin/v1/partners/${partnerId}/portal-links`, { ttlMinutes: 5 }).expect(201))
      .body as { url: string };
    const cookie = await signInWith(t, made.url);
    const second = await signIn(t, apiKey);
    await t.http().get('/portal').set('Cookie', cookie).expect(200);
    await t.admin('delete', `/admin/v1/partners/${partnerId}/portal-sessions`).expect(204);
    await t.http().get('/portal').set('Cookie', cookie).expect(401);
    await t.http().get('/portal').set('Cookie', second).expect(401);
    const audit = (await t.admin('get', `/admin/v1/audit?targetId=${partnerId}`).expect(200)).body.items as {
      action: string;
      operator: { name: string };
    }[];
    const actions = ['partner.portal-sessions.end', 'portal.session.open', 'partner.portal-link.create'];
    expect(audit.map((a) => a.action).slice(0, 3)).toEqual(actions);
    expect(JSON.stringify(audit)).not.toContain(new URL(made.url).searchParams.get('token'));
    expect(ADMIN_TOKEN).toBeTruthy();
  });

  it("the overview's statements read the partner's attempts of the last day by index and each callback by its key, under the generic plan", async () => {
    const company = (
      await t
        .as(apiKey, 'post', '/v1/companies', { name: 'Charted', status_callback: 'http://127.0.0.1:9/c' })
        .expect(201)
    ).body.id as string;
    await t.admin('patch', `/admin/v1/companies/${company}/credit`, { repaymentTermDays: 9 }).expect(200);
    const [{ id }] = await t.sql<{ id: string }>('SELECT id FROM callbacks WHERE company_id = $1', [company]);
    await t.sql(
      `INSERT INTO callback_attempts (callback_id, partner_id, number, started_at, duration_ms, status_code) VALUES ($1, $2, 1, now() - interval '2 days', 5, 500), ($1, $2, 2, now(), 5, 204)`,
      [id, partnerId],
    );
    const pg = new Client({ connectionString: t.config.databaseUrl, options: PLANNER_SETTINGS });
    await pg.connect();
    try {
      await pg.query(`PREPARE activity(uuid) AS ${storeStatement('partner-activity').text}`);
      const { rows } = await pg.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE activity('${partnerId}')`);
      const scans = scansOf(
        (rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0].Plan,
        new Set(['callback_attempts', 'callbacks']),
      );
      expect(scans.map((x) => `${x.relation} ${x.type} ${x.index}`).sort()).toEqual([
        'callback_attempts Index Scan callback_attempts_partner_started_idx',
        'callbacks Index Scan callbacks_pkey',
      ]);
      // The attempt two days old is not read: the window bounds the scan (test/portal-activity-plans.e2e-spec.ts: and the partner).
      expect(scans.find((x) => x.relation === 'callback_attempts')!.examined).toBe(1);
      // Each destination's last error's time: the same range of attempts, then each failing destination by its key.
      await pg.query(`PREPARE errors(uuid) AS ${storeStatement('partner-last-error-times').text}`);
      const errors = await pg.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE errors('${partnerId}')`);
      const read = scansOf(
        (errors.rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0].Plan,
        new Set(['callback_attempts', 'callbacks', 'destinations']),
      );
      expect(read.map((x) => `${x.relation} ${x.type} ${x.index}`).sort()).toEqual([
        'callback_attempts Index Scan callback_attempts_partner_started_idx',
        'callbacks Index Scan callbacks_pkey',
        'destinations Index Scan destinations_pkey',
      ]);
    } finally {
      await pg.end();
    }
    const { hours, delivered, failed } = await t.app.get(PartnerActivityReads).lastDay(partnerId);
    expect(hours).toHaveLength(24);
    expect(hours.reduce((n, h) => n + h.succeeded, 0)).toBe(1);
    expect([delivered, failed]).toEqual([0, 0]);
  });

  it('rotating the API key without overlap ends the portal sessions; with overlap it does not', async () => {
    const p = await createPartner(t, 'Rotating Bank');
    const cookie = await signIn(t, p.apiKey);
    const { apiKey: next } = (
      await t.admin('post', `/admin/v1/partners/${p.id}/rotate-api-key`, { previousKeyValidHours: 1 }).expect(200)
    ).body;
    await t.http().get('/portal').set('Cookie', cookie).expect(200);
    await t.admin('post', `/admin/v1/partners/${p.id}/rotate-api-key`, { previousKeyValidHours: 0 }).expect(200);
    await t.http().get('/portal').set('Cookie', cookie).expect(401);
    expect(next).toMatch(/^fsk_/);
  });
});

describe('partner portal at an https PORTAL_BASE_URL', () => {
  const https = harness({ ROLE: 'api', PORTAL_BASE_URL: 'https://portal.example' });

  it('the session cookie is __Host- prefixed, Secure, Path=/, HttpOnly, SameSite=Strict; links are https', async () => {
    const { url } = await link(https.t, https.p.apiKey);
    expect(url).toMatch(/^https:\/\/portal\.example\/portal\/login\?token=fsp_/);
    await https.t.http().get(target(url)).expect(200);
    const cookie = String((await pressSignIn(https.t, linkToken(url)).expect(303)).headers['set-cookie']);
    expect(cookie).toMatch(/^__Host-portal_session=fss_[A-Za-z0-9_-]+;/);
    expect(cookie).toMatch(/; Secure(;|$)/);
    expect(cookie).toMatch(/; Path=\/(;|$)/);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Strict/);
    await https.t.http().get('/portal').set('Cookie', cookie.split(';')[0]).expect(200);
  });
});
