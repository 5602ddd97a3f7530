/**
 * The portal's actions as a hostile partner tries them, over HTTP: every POST of a session needs
 * its form token (walked over the route table: 403, nothing written); another partner's ids are
 * 404 on every page and action that takes one; a refused action's page leads back to where the
 * partner was; a key roll sent twice rolls once; times in refusals are the portal's format.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { RouteOptions } from 'fastify';
import { accessOf } from '../src/operators/access/route-access.js';
import { createPartner, harness, TestApp } from './support/harness.js';
import { csrfOf, portalLink, signInWith } from './support/portal.js';

const routes: RouteOptions[] = [];
const record = (app: NestFastifyApplication) =>
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRoute', (r: RouteOptions) => void routes.push(r));

describe("the portal's actions", () => {
  const e2e = harness({ ROLE: 'api' }, { beforeSetup: record, partner: 'Actions Bank' });
  let t: TestApp;
  let cookie: string;
  const post = (path: string, form: Record<string, string>) =>
    t.http().post(path).set({ Cookie: cookie, 'Sec-Fetch-Site': 'same-origin' }).type('form').send(form);
  const get = (path: string) => t.http().get(path).set('Cookie', cookie);
  /** Every row of the tables an action could write, as one digest. */
  const written = async () => {
    const tables = [
      'partners',
      'companies',
      'limit_requests',
      'withdrawal_requests',
      'callbacks',
      'operational_events',
      'audit_entries',
    ];
    const digests = await Promise.all(
      tables.map(
        async (name) =>
          (
            await t.sql<{ d: string }>(
              `SELECT md5(coalesce(string_agg(x::text, ',' ORDER BY x::text), '')) AS d FROM "${name}" x`,
            )
          )[0].d,
      ),
    );
    return digests.join();
  };

  beforeAll(async () => {
    t = e2e.t;
    cookie = await signInWith(t, (await portalLink(t, e2e.p.apiKey)).url);
  });

  it("refuses every POST of a session without its token or with another session's: 403, nothing written", async () => {
    const actions = routes.filter((r) => r.method === 'POST' && accessOf(r.config)?.to === 'portal-session');
    expect(actions.map((r) => r.url).sort()).toEqual([
      '/portal/callbacks/:callbackId/redeliver',
      '/portal/logout',
      '/portal/replay',
      '/portal/settings',
      '/portal/settings/roll-secret',
      '/portal/settings/signature-scheme',
      '/portal/settings/test-event',
      '/portal/test',
      '/portal/urls/move',
    ]);
    const other = await signInWith(t, (await portalLink(t, e2e.p.apiKey)).url);
    const theirs = await csrfOf(t, other);
    const before = await written();
    for (const r of actions) {
      const path = r.url.replace(':callbackId', '00000000-0000-4000-8000-000000000000');
      const forms: Record<string, string>[] = [{}, { _csrf: 'forged' }, { _csrf: theirs }];
      for (const form of forms) {
        const res = await post(path, { ...form, scheme: 'ed25519', operationsUrl: 'http://127.0.0.1:9/x' }).expect(403);
        expect(`${r.url} ${res.text}`).toContain('Nothing was changed');
      }
    }
    expect(await written()).toBe(before);
    await get('/portal').expect(200);
  });

  it("answers another partner's ids 404 on every page and action that takes one", async () => {
    const other = await createPartner(t, 'Other Bank');
    const url = 'http://127.0.0.1:9/theirs';
    const company = (
      await t.as(other.apiKey, 'post', '/v1/companies', { name: 'Theirs', status_callback: url }).expect(201)
    ).body.id;
    await t.admin('patch', `/admin/v1/companies/${company}/credit`, { repaymentTermDays: 3 }).expect(200);
    const [{ id }] = await t.sql<{ id: string }>('SELECT id FROM callbacks WHERE company_id = $1', [company]);
    const _csrf = await csrfOf(t, cookie);
    await get(`/portal/callbacks/${id}`).expect(404);
    await get(`/portal/callbacks/find?id=${id}`).expect(404);
    await get(`/portal/test?callback=${id}`).expect(404);
    await get(
      `/portal/urls?from=${encodeURIComponent(url)}&to=${encodeURIComponent('http://127.0.0.1:9/mine')}`,
    ).expect(404);
    const before = await written();
    await post(`/portal/callbacks/${id}/redeliver`, { _csrf }).expect(404);
    await post('/portal/urls/move', { _csrf, from: url, to: 'http://127.0.0.1:9/mine' }).expect(404);
    await post('/portal/test', { _csrf, companyId: company, url: 'http://127.0.0.1:9/t' }).expect(404);
    expect(await written()).toBe(before);
  });

  it("leads a refused action's page back to where the partner was, its times in the portal's format", async () => {
    const company = (
      await t
        .as(e2e.p.apiKey, 'post', '/v1/companies', { name: 'Mine', status_callback: 'http://127.0.0.1:9/m' })
        .expect(201)
    ).body.id;
    const _csrf = await csrfOf(t, cookie);
    const sent = await post('/portal/test', { _csrf, companyId: company }).expect(303);
    const testId = new URL(sent.headers.location, 'http://x').searchParams.get('callback')!;
    // A test callback cannot be redelivered: the page says so, and leads back to the callback.
    const refused = await post(`/portal/callbacks/${testId}/redeliver`, { _csrf }).expect(409);
    expect(refused.text).toContain(`<a href="/portal/callbacks/${testId}">Back</a>`);
    const bad = await post('/portal/settings/test-event', { _csrf }).expect(422);
    expect(bad.text).toContain('<a href="/portal/settings">Back</a>');
    expect((await get('/portal/callbacks?from=yesterday').expect(400)).text).toContain(
      '<a href="/portal/callbacks">Back</a>',
    );
    // A test callback to a destination whose circuit is open fails at once, its error naming when it opened, formatted.
    await t.sql(`UPDATE destinations
                    SET opened_at = '2026-11-28T09:30:00.250Z', next_probe_at = now() + interval '1 hour'
                  WHERE origin = 'http://127.0.0.1:9'`);
    const unsent = await post('/portal/test', { _csrf, companyId: company }).expect(303);
    const page = (await get(unsent.headers.location).expect(200)).text;
    expect(page).toContain('circuit open since 2026-11-28 09:30:00 UTC');
    expect(page).not.toMatch(/\d{2}:\d{2}:\d{2}\.\d{3}Z/);
  });

  it('rolls the signing key once for a form sent twice: the second is refused 409 and the key stays', async () => {
    const key = async () =>
      (await t.sql<{ k: string }>('SELECT signing_secret AS k FROM partners WHERE id = $1', [e2e.p.id]))[0].k;
    const settings = (await get('/portal/settings').expect(200)).text;
    const shownAt = /name="shownAt" value="([^"]+)"/.exec(settings)![1];
    const _csrf = await csrfOf(t, cookie);
    const first = await post('/portal/settings/roll-secret', { _csrf, shownAt }).expect(200);
    const secret = /<pre class="secret"[^>]*>(whsec_[^<]+)<\/pre>/.exec(first.text)![1];
    expect(first.headers['cache-control']).toBe('no-store');
    const rolled = await key();
    const again = await post('/portal/settings/roll-secret', { _csrf, shownAt }).expect(409);
    expect(again.text).toContain('Your signing key was changed after this page showed it: nothing was changed.');
    expect(await key()).toBe(rolled);
    // Shown once: no page shows it again.
    expect((await get('/portal/settings').expect(200)).text).not.toContain(secret);
  });
});
