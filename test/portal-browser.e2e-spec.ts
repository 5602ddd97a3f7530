/**
 * The partner portal in Debian's Chromium, as a partner's developer and as an attacker uses it:
 * links, the overview with a failing destination and its chart, the callback list's filters, a
 * failed callback redelivered, a replay, a test callback, the settings, sign-out; another
 * partner's id, a forged POST, markup from a receiver and in a company's name, an operator ending
 * the session; every page at 390 and 1280 px (axe-core, no word broken inside). The newer pages:
 * portal-pages-browser.e2e-spec.ts.
 */
import { copyFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { openBrowser, TestBrowser } from './support/browser.js';
import { layoutProblems, WIDTHS } from './support/portal-layout.js';
import { Receiver } from './support/receiver.js';
import { companyWithCallback, createPartner, harness, Partner, TestApp, until } from './support/harness.js';

/** What a receiver's answer and a company's name try to run: each sets a global if it ever does. */
const ANSWER_MARKUP = '<script>window.__fromAnswer = 1</script><img src="/x" onerror="window.__fromAnswerImg = 1">';
const COMPANY_MARKUP = '<script>window.__fromName = 1</script><img src="/x" onerror="window.__fromNameImg = 1">';
const GLOBALS = ['__fromAnswer', '__fromAnswerImg', '__fromName', '__fromNameImg'];
const DOCS = path.join(__dirname, '..', 'docs');

type Row = { status: string; attempt_count: number };

describe('the partner portal in a browser', () => {
  let t: TestApp;
  let p: Partner;
  let base: string;
  let browser: TestBrowser;
  let page: Page;
  const rx: Record<'down' | 'flaky' | 'replay', Receiver> = {} as never;
  const fixed = { flaky: false, replay: false };
  let flakyId: string;
  let flakyCompany: string;
  const replayIds: string[] = [];

  const row = async (id: string) =>
    (await t.sql<Row>('SELECT status, attempt_count FROM callbacks WHERE id = $1', [id]))[0];
  const settled = (ids: string[], status: string, what: string) =>
    until(async () => (await Promise.all(ids.map(row))).every((r) => r.status === status), { what, timeoutMs: 30_000 });
  const linkPath = async (apiKey = p.apiKey) => {
    const url = new URL((await t.as(apiKey, 'post', '/v1/partner/portal-links', {}).expect(201)).body.url as string);
    return `${base}${url.pathname}${url.search}`;
  };
  /** Follows a link and presses its Sign in: the portal's overview. */
  const signIn = async (link: string, on: Page = page) => {
    expect((await on.goto(link))!.status()).toBe(200);
    await on.getByRole('button', { name: 'Sign in' }).click();
    await on.waitForURL(`${base}/portal`);
  };
  // Strings: the test compiles without the DOM's types; these run in the page.
  const globalsSet = (on: Page = page) =>
    on.evaluate<string[]>(`${JSON.stringify(GLOBALS)}.filter((n) => window[n] !== undefined)`);

  // Two attempts each; three failures in a row open a destination, probed again within a second.
  const e2e = harness(
    { CALLBACK_RETRY_SCHEDULE: '1s', CALLBACK_BREAKER_THRESHOLD: '3', CALLBACK_BREAKER_PROBE: '300ms..1s' },
    { partner: 'Portal Bank' },
  );
  beforeAll(async () => {
    ({ t, p } = e2e);
    rx.down = await Receiver.start();
    rx.down.answer = (_h, _req, res) => res.writeHead(503).end('down for maintenance');
    rx.flaky = await Receiver.start();
    rx.flaky.answer = (_h, _req, res) =>
      fixed.flaky ? res.writeHead(204).end() : res.writeHead(500, { 'content-type': 'text/html' }).end(ANSWER_MARKUP);
    rx.replay = await Receiver.start();
    rx.replay.answer = (_h, _req, res) =>
      fixed.replay ? res.writeHead(204).end() : res.writeHead(500).end('replay me later');
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;

    const flaky = await companyWithCallback(t, p, rx.flaky.url('/hook'));
    flakyCompany = flaky.c;
    await t.as(p.apiKey, 'patch', `/v1/companies/${flaky.c}`, { status_callback: rx.flaky.url('/hook') }).expect(200);
    await t.sql('UPDATE companies SET name = $1 WHERE id = $2', [COMPANY_MARKUP, flaky.c]);
    flakyId = await flaky.change();
    const replay = await companyWithCallback(t, p, rx.replay.url('/hook'));
    for (let i = 0; i < 3; i++) replayIds.push(await replay.change());
    const down = await companyWithCallback(t, p, rx.down.url('/hook'));
    for (let i = 0; i < 3; i++) await down.change();
    await settled([flakyId], 'failed', 'the flaky callback to fail');
    await settled(replayIds, 'failed', 'the replayed callbacks to fail');
    await until(
      async () =>
        (await t.sql('SELECT 1 FROM destinations WHERE opened_at IS NOT NULL AND origin = $1', [rx.down.url('')]))
          .length > 0,
      { what: 'the down destination to open', timeoutMs: 30_000 },
    );
    browser = await openBrowser(undefined, { viewport: { width: 1280, height: 900 } });
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    for (const r of Object.values(rx)) await r?.close();
  });

  it('follows a link once: the second use, an expired link and an unknown one open nothing', async () => {
    const link = await linkPath();
    expect((await page.goto(link))!.status()).toBe(200);
    await page.getByText('Portal Bank').waitFor();
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${base}/portal`);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.context().clearCookies();
    const again = (await page.goto(link))!;
    expect(again.status()).toBe(410);
    await page.getByText('used already').waitFor();
    const expired = await linkPath();
    await t.sql("UPDATE portal_links SET expires_at = now() - interval '1 second' WHERE used_at IS NULL");
    expect((await page.goto(expired))!.status()).toBe(410);
    expect((await page.goto(`${base}/portal/login?token=fsp_unknown`))!.status()).toBe(404);
    expect((await page.goto(`${base}/portal`))!.status()).toBe(401);
    await page.getByText('POST /v1/partner/portal-links').waitFor();
    await signIn(await linkPath());
  });

  it('shows the failing destination, its banner, the counts and the chart with its table', async () => {
    await page.goto(`${base}/portal`);
    await page
      .getByRole('alert')
      .filter({ hasText: rx.down.url('') })
      .waitFor();
    const row = page.getByRole('row').filter({ hasText: rx.down.url('') });
    await row.getByText('open').waitFor();
    // Its last error with the time it happened, in the one format.
    await row.getByText('HTTP 503').waitFor();
    await row.getByText(/^at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/).waitFor();
    expect(
      await page
        .locator('svg.chart rect.bad')
        .evaluateAll((rects) => rects.some((r) => Number(r.getAttribute('height')) > 0)),
    ).toBe(true);
    const hours = page.getByRole('table', { name: /Attempts per hour/ });
    expect(await hours.getByRole('row').count()).toBe(25);
    // Newest hour first, dated; the chart's axis dated too, oldest hour left.
    const shown = await hours.locator('tbody th').allTextContents();
    expect(shown[0]).toBe(`${new Date().toISOString().slice(0, 13).replace('T', ' ')}:00:00 UTC`);
    expect([...shown].sort().reverse()).toEqual(shown);
    const axis = await page.locator('svg.chart text.label').allTextContents();
    expect(axis).toEqual([shown[23], shown[0], expect.stringMatching(/^max /)]);
    const failedAttempts = (await hours.locator('tbody tr td:nth-child(3)').allTextContents()).reduce(
      (n, c) => n + Number(c),
      0,
    );
    // The flaky callback's two; at least three each where a circuit opened after three in a row.
    expect(failedAttempts).toBeGreaterThanOrEqual(2 + 3 + 3);
    expect(
      Number(await page.locator('.counts div').filter({ hasText: 'Failed' }).locator('dd').textContent()),
    ).toBeGreaterThanOrEqual(4);
    expect(browser.refusedByPolicy).toEqual([]);
    copyFileSync(await browser.screenshot('portal-overview.png'), path.join(DOCS, 'portal-overview.png'));
  });

  it('filters the callback list by status and company', async () => {
    await page.goto(`${base}/portal/callbacks`);
    await page.getByLabel('status').selectOption('failed');
    await page.getByLabel('companyId').fill(flakyCompany);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/status=failed/);
    const rows = page.locator('tbody tr');
    expect(await rows.count()).toBe(1);
    await rows.getByText('failed').waitFor();
    await page.getByLabel('status').selectOption('delivered');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No callback matches.').waitFor();
  });

  it('shows markup from a receiver and in a company name as text, and runs none of it', async () => {
    await page.goto(`${base}/portal/callbacks/${flakyId}`);
    await page.getByText(ANSWER_MARKUP).first().waitFor();
    await page.getByText(COMPANY_MARKUP).waitFor();
    expect(await globalsSet()).toEqual([]);
  });

  it('redelivers a failed callback to the receiver that now answers: it arrives with the same webhook-id', async () => {
    fixed.flaky = true;
    await page.goto(`${base}/portal/callbacks/${flakyId}`);
    await page.getByRole('button', { name: 'Redeliver' }).click();
    await page.getByRole('status').filter({ hasText: 'Redelivery requested' }).waitFor();
    await settled([flakyId], 'delivered', 'the redelivered callback');
    const arrived = rx.flaky.hits.filter((h) => h.headers['webhook-id'] === flakyId);
    expect(arrived).toHaveLength(3);
  });

  it('replays a window: the count first, then every failed callback in it arrives', async () => {
    await page.goto(`${base}/portal/replay`);
    const minute = (offset: number) => new Date(Date.now() + offset).toISOString().slice(0, 16);
    await page.getByLabel('From').fill(minute(-3_600_000));
    await page.getByLabel('To').fill(minute(3_600_000));
    await page.getByLabel('Destination').selectOption(rx.replay.url(''));
    await page.getByRole('button', { name: 'Count' }).click();
    await page.getByRole('status').filter({ hasText: '3 failed callbacks' }).waitFor();
    fixed.replay = true;
    const before = rx.replay.hits.length;
    await page.getByRole('button', { name: 'Replay' }).click();
    await page.getByRole('status').filter({ hasText: 'Replay requested: 3' }).waitFor();
    await settled(replayIds, 'delivered', 'the replayed callbacks');
    // Each arrives once more, with its own webhook-id (some had fewer attempts before: their destination opened).
    for (const id of replayIds)
      expect(rx.replay.hits.slice(before).filter((h) => h.headers['webhook-id'] === id)).toHaveLength(1);
    // Each one's last attempt reads as the replay's (or, on a destination still open, as its probe).
    const kinds: string[] = [];
    for (const id of replayIds) {
      await page.goto(`${base}/portal/callbacks/${id}`);
      kinds.push((await page.locator('.attempts h3').last().textContent())!.replace(/^Attempt \d+: /, ''));
    }
    expect(kinds).toContain('first attempt after a replay');
    for (const kind of kinds) expect(kind).toMatch(/^(first attempt after a replay|probe of its open destination .*)$/);
  });

  it('sends a test callback to a company of the list and shows its attempt once settled, its name as text', async () => {
    await page.goto(`${base}/portal/test`);
    await page.locator(`input[name="companyId"][value="${flakyCompany}"]`).check();
    await page.getByLabel('URL').fill(rx.flaky.url('/test-hook'));
    await page.getByRole('button', { name: 'Send test callback' }).click();
    await page.waitForURL(/\/portal\/test\?callback=/);
    await page.getByText('HTTP 204').waitFor({ timeout: 20_000 });
    expect(rx.flaky.on('/test-hook')).toHaveLength(1);
    await page.getByText(COMPANY_MARKUP).waitFor();
    expect(await globalsSet()).toEqual([]);
  });

  it('changes the operations URL, refuses a POST without its CSRF token, and signs out', async () => {
    await page.goto(`${base}/portal/settings`);
    await page.getByLabel('Operations URL').fill('http://127.0.0.1:9/ops');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect(await page.getByLabel('Operations URL').inputValue()).toBe('http://127.0.0.1:9/ops');
    // A forged form: the session's cookie (the browser sends it) but no CSRF token.
    const forged = await page
      .context()
      .request.post(`${base}/portal/settings`, { form: { operationsUrl: 'http://127.0.0.1:9/evil' }, maxRedirects: 0 });
    expect(forged.status()).toBe(403);
    expect(await t.sql('SELECT operations_url FROM partners WHERE id = $1', [p.id])).toEqual([
      { operations_url: 'http://127.0.0.1:9/ops' },
    ]);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Signed out' }).waitFor();
    expect((await page.goto(`${base}/portal/settings`))!.status()).toBe(401);
  });

  it("answers another partner's callback 404", async () => {
    const other = await createPartner(t, 'Other Bank');
    const theirs = await (await companyWithCallback(t, other, rx.down.url('/theirs'))).change();
    await signIn(await linkPath());
    expect((await page.goto(`${base}/portal/callbacks/${theirs}`))!.status()).toBe(404);
  });

  it("ends a live session within a second of an operator's DELETE …/portal-sessions", async () => {
    await signIn(await linkPath());
    expect((await page.goto(`${base}/portal/callbacks`))!.status()).toBe(200);
    await t.admin('delete', `/admin/v1/partners/${p.id}/portal-sessions`).expect(204);
    // No process caches a session: the very next request after the DELETE's answer is refused.
    expect((await page.reload())!.status()).toBe(401);
    await page.getByText('POST /v1/partner/portal-links').waitFor();
  });

  it('reads well at 390 and 1280 px without its CSP (axe-core, no word broken inside, no page too wide), and still runs no markup', async () => {
    for (const width of WIDTHS) {
      const other = await openBrowser(undefined, { bypassCSP: true, viewport: { width, height: 844 } });
      try {
        const n = other.page;
        await signIn(await linkPath(), n);
        const problems: string[] = [];
        for (const path of [
          '/portal',
          '/portal/callbacks',
          `/portal/callbacks/${flakyId}`,
          '/portal/replay',
          '/portal/test',
          '/portal/settings',
        ]) {
          await n.goto(`${base}${path}`);
          problems.push(...(await layoutProblems(n, `${path} at ${width} px`)));
        }
        expect(problems).toEqual([]);
        await n.goto(`${base}/portal/callbacks/${flakyId}`);
        expect(await globalsSet(n)).toEqual([]);
      } finally {
        await other.close();
      }
    }
  }, 180_000);
});
