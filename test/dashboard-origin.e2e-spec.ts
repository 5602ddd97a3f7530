/**
 * The queue dashboard as a browser page must be: its own security headers, and no action taken for
 * another site, even with the operator's Basic credentials that the browser remembers.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { openBrowser, TestBrowser } from './support/browser.js';
import { ADMIN_TOKEN, createPartner, harness, TestApp, until } from './support/harness.js';

const BASIC = `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`;
const RETRY_ALL = '/admin/queues/api/queues/callbacks/retry/failed';

describe('the queue dashboard and other sites', () => {
  let t: TestApp;
  let base: string;
  let evil: http.Server;
  let evilBase: string;
  let browser: TestBrowser | undefined;

  const failedCount = async () =>
    Number((await t.sql<{ n: string }>(`SELECT count(*) AS n FROM callbacks WHERE status = 'failed'`))[0].n);
  const auditCount = async () => Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM audit_entries'))[0].n);

  // ROLE=api: no worker, so the failed callbacks stay failed unless something redelivers them.
  const e2e = harness({ ROLE: 'api' }, { partner: null });
  beforeAll(async () => {
    ({ t } = e2e);
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    const p = await createPartner(t);
    const company = (
      await t
        .as(p.apiKey, 'post', '/v1/companies', { name: 'Framed', status_callback: 'http://127.0.0.1:9/x' })
        .expect(201)
    ).body.id as string;
    for (const days of [40, 50])
      await t.admin('patch', `/admin/v1/companies/${company}/credit`, { repaymentTermDays: days }).expect(200);
    await t.sql(`UPDATE callbacks SET status = 'failed', next_attempt_at = NULL, last_error = 'HTTP 500'`);
    // Another site (another origin: another port): it frames the dashboard and asks it to retry.
    evil = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><html><body>
        <iframe id="board" src="${base}/admin/queues"></iframe>
        <form id="f" method="POST" action="${base}${RETRY_ALL}"></form>
        <script>
          fetch('${base}${RETRY_ALL}', { method: 'PUT', credentials: 'include' }).then((r) => (document.title = 'put ' + r.status), (e) => (document.title = 'put refused'));
          fetch('${base}${RETRY_ALL}', { method: 'POST', mode: 'no-cors', credentials: 'include' }).then(() => (document.body.dataset.post = 'sent'), () => (document.body.dataset.post = 'refused'));
        </script></body></html>`);
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    evilBase = `http://127.0.0.1:${(evil.address() as AddressInfo).port}`;
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => evil?.close(r));
  });

  it('sends its security headers: a content security policy forbidding framing, nosniff, no referrer', async () => {
    for (const path of ['/admin/queues', '/admin/queues/api/queues']) {
      const res = await t.http().get(path).set('Authorization', BASIC).expect(200);
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(res.headers['content-security-policy']).toContain("script-src 'self'");
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
    }
    // Refusals too: the login prompt is a page a browser shows.
    const refused = await t.http().get('/admin/queues').expect(401);
    expect(refused.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  });

  it("refuses an action another site's page sends with the operator's credentials (Origin or Sec-Fetch-Site), and takes it from its own", async () => {
    const before = { failed: await failedCount(), audit: await auditCount() };
    expect(before.failed).toBe(2);
    const origin = await t
      .http()
      .put(RETRY_ALL)
      .set('Authorization', BASIC)
      .set('Origin', 'http://evil.example')
      .expect(403);
    expect(origin.body.message).toMatch(/another site/);
    await t.http().put(RETRY_ALL).set('Authorization', BASIC).set('Origin', 'null').expect(403);
    await t.http().put(RETRY_ALL).set('Authorization', BASIC).set('Sec-Fetch-Site', 'cross-site').expect(403);
    await t.http().put(RETRY_ALL).set('Authorization', BASIC).set('Sec-Fetch-Site', 'same-site').expect(403);
    // Nothing retried, nothing audited.
    expect({ failed: await failedCount(), audit: await auditCount() }).toEqual(before);
    // Its own page's request (same origin), and a client that is not a browser, act.
    const own = await t
      .http()
      .put(RETRY_ALL)
      .set('Authorization', BASIC)
      .set('Origin', base)
      .set('Sec-Fetch-Site', 'same-origin')
      .expect(200);
    expect(own.body).toEqual({ retried: 2, skipped: 0 });
    await t.sql(`UPDATE callbacks SET status = 'failed', next_attempt_at = NULL`);
  });

  it('in Chromium with the Basic credentials remembered: another site can neither frame the dashboard nor make it act', async () => {
    browser = await openBrowser({ username: 'admin', password: ADMIN_TOKEN });
    const { page } = browser;
    // The operator has the dashboard open: its page runs under its policy with nothing refused.
    await page.goto(`${base}/admin/queues/queue/callbacks?status=failed`);
    await page.getByText('HTTP 500').first().waitFor();
    expect(browser.refusedByPolicy).toEqual([]);
    const before = { failed: await failedCount(), audit: await auditCount() };

    await page.goto(`${evilBase}/`);
    await until(
      () => page.evaluate<boolean>("document.title.startsWith('put') && document.body.dataset.post !== undefined"),
      { what: "the other site's requests" },
    );
    await until(() => browser!.refusedByPolicy.some((m) => /frame-ancestors 'none'/.test(m)), {
      what: 'the frame refused',
    });
    // Its cross-site PUT never reached a handler (the preflight is not granted); its no-cors POST did
    // reach the service, and did nothing.
    expect(await page.title()).toBe('put refused');
    expect({ failed: await failedCount(), audit: await auditCount() }).toEqual(before);
  }, 60_000);
});
