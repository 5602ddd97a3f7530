/**
 * The partner portal's pages in Debian's Chromium, as a bank's developer uses them without the
 * docs: a callback found by its id, its attempts and what comes next; the log filtered by
 * destination; the event catalogue against what a receiver really got; a callback URL changed
 * (count, then move) and the next callback at the new one; the signing secret rolled and the
 * next callback verified with the new one and the old; a test callback to a company picked from a
 * list, its result appearing by itself; a test event. Every page at 390 and 1280 px: no word
 * broken inside, no page wider than the window, no serious axe-core violation.
 */
import { copyFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { openBrowser, TestBrowser } from './support/browser.js';
import { layoutProblems, WIDTHS } from './support/portal-layout.js';
import { Receiver, webhookHeaders } from './support/receiver.js';
import { harness, Partner, TestApp, until } from './support/harness.js';

const DOCS = path.join(__dirname, '..', 'docs');
const UUID_OR_NULL = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|null)$/;
type Body = Record<string, unknown>;

describe('the portal pages in a browser', () => {
  let t: TestApp;
  let p: Partner;
  let base: string;
  let browser: TestBrowser;
  let page: Page;
  const rx: Record<'old' | 'moved' | 'flaky' | 'ops' | 'test', Receiver> = {} as never;
  let company: string;
  let flakyId: string;
  let testId: string;
  let eventId: string;
  let secret: string;

  // Three attempts, 30 s apart: a failed first attempt leaves its callback waiting for the next.
  const e2e = harness({ CALLBACK_RETRY_SCHEDULE: '30s,30s' }, { partner: 'Pages Bank' });
  const as = (m: 'post' | 'patch', url: string, body?: object) => t.as(p.apiKey, m, url, body);
  const bodies = (r: Receiver) => r.hits.map((h) => JSON.parse(h.body) as Body);
  const change = () =>
    t
      .admin('patch', `/admin/v1/companies/${company}/credit`, { repaymentTermDays: 7 + rx.moved.hits.length })
      .expect(200);
  const signIn = async (on: Page) => {
    const url = new URL((await as('post', '/v1/partner/portal-links', {}).expect(201)).body.url as string);
    await on.goto(`${base}${url.pathname}${url.search}`);
    await on.getByRole('button', { name: 'Sign in' }).click();
    await on.waitForURL(`${base}/portal`);
  };

  beforeAll(async () => {
    ({ t, p } = e2e);
    for (const name of ['old', 'moved', 'flaky', 'ops', 'test'] as const) rx[name] = await Receiver.start();
    rx.flaky.answer = (_h, _req, res) => res.writeHead(500, 'Not Yet', { 'x-request-id': 'flaky-1' }).end('not yet');
    // The test callback's answer comes late: its page shows it pending first.
    rx.test.answer = (_h, _req, res) => void setTimeout(() => res.writeHead(204).end(), 1500);
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    // One resource of each kind on one URL, and a callback of each of the five messages.
    const url = rx.old.url('/hooks');
    company = (await as('post', '/v1/companies', { name: 'Main Ltd', status_callback: url }).expect(201)).body.id;
    const lr = (
      await as('post', `/v1/companies/${company}/limit-requests`, { amount: '1000', status_callback: url }).expect(201)
    ).body.id;
    await t.admin('post', `/admin/v1/limit-requests/${lr}/approve`).expect(200);
    const w = (
      await as('post', `/v1/companies/${company}/withdrawal`, {
        amount: '100',
        status_callback: url,
        loan_status_callback: url,
      }).expect(201)
    ).body.id;
    await t.admin('post', `/admin/v1/withdrawal-requests/${w}/accept`).expect(200);
    const loan = (await t.admin('post', `/admin/v1/withdrawal-requests/${w}/pay-out`).expect(200)).body.loanId;
    await t.admin('post', `/admin/v1/loans/${loan}/payments`, { amount: '10' }).expect(201);
    const flaky = (
      await as('post', '/v1/companies', { name: 'Flaky Ltd', status_callback: rx.flaky.url('/f') }).expect(201)
    ).body.id;
    await t.admin('patch', `/admin/v1/companies/${flaky}/credit`, { repaymentTermDays: 5 }).expect(200);
    flakyId = (await t.sql<{ id: string }>('SELECT id FROM callbacks WHERE company_id = $1', [flaky]))[0].id;
    for (const name of ['Picker Ltd', 'Zeta Trading', 'Omega Foods'])
      await as('post', '/v1/companies', { name }).expect(201);
    await until(() => new Set(bodies(rx.old).map((b) => b.message)).size === 5 && rx.flaky.hits.length === 1, {
      what: 'every message at the receiver, and the first attempt of the flaky one',
      timeoutMs: 30_000,
    });
    browser = await openBrowser(undefined, { viewport: { width: 1280, height: 900 } });
    page = browser.page;
    await signIn(page);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    for (const r of Object.values(rx)) await r?.close();
  });

  it('finds a callback by its webhook-id and reads its attempt and what comes next', async () => {
    await page.goto(`${base}/portal/callbacks`);
    await page.getByLabel('Callback id (its webhook-id)').fill(flakyId);
    await page.getByRole('button', { name: 'Find' }).click();
    await page.waitForURL(`${base}/portal/callbacks/${flakyId}`);
    await page.getByRole('heading', { name: 'Attempt 1: first attempt' }).waitFor();
    expect(await page.locator('.attempts dd').allTextContents()).toEqual(expect.arrayContaining(['500', '127.0.0.1']));
    await page.getByText('not yet', { exact: true }).waitFor();
    // The request as sent (the receiver's copy) and the answer's status line and headers.
    const [sent, answered] = await page.locator('.attempts pre.headers').allTextContents();
    const hit = rx.flaky.hits[0];
    expect(sent.split('\n')).toEqual(
      ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'content-type', 'user-agent'].map(
        (name) => `${name}: ${hit.headers[name] as string}`,
      ),
    );
    expect(answered.split('\n')).toEqual(expect.arrayContaining(['HTTP/1.1 500 Not Yet', 'x-request-id: flaky-1']));
    expect(await page.locator('p.next').textContent()).toMatch(
      /^Next attempt at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC: 2 of the 3 attempts its schedule allows remain, that one/,
    );
    expect(browser.refusedByPolicy).toEqual([]);
    copyFileSync(await browser.screenshot('portal-callback.png'), path.join(DOCS, 'portal-callback.png'));
    // An id of no callback of this partner: a page saying so, leading back to the log.
    expect((await page.goto(`${base}/portal/callbacks/find?id=00000000-0000-4000-8000-000000000000`))!.status()).toBe(
      404,
    );
    await page.getByRole('link', { name: 'Back', exact: true }).click();
    await page.waitForURL(`${base}/portal/callbacks`);
  });

  it('filters the log by destination, shown in its own column with the next attempt', async () => {
    await page.goto(`${base}/portal/callbacks`);
    await page.getByLabel('destination').selectOption(rx.flaky.url(''));
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/destination=/);
    const rows = page.locator('tbody tr');
    expect(await rows.count()).toBe(1);
    expect(await rows.locator('td').allTextContents()).toEqual([
      'CreditLimitUpdated',
      'pending',
      '1',
      rx.flaky.url(''),
      expect.stringMatching(/ UTC$/),
      expect.stringMatching(/^next \d{4}-.* UTC$/),
    ]);
    await rows.getByRole('link', { name: flakyId }).waitFor();
  });

  it('reads each attempt as what it was: a retry brought forward, the last retry, the first after a redelivery', async () => {
    const headings = () => page.locator('.attempts h3').allTextContents();
    const redeliver = async (attempts: number) => {
      await page.goto(`${base}/portal/callbacks/${flakyId}`);
      await page.getByRole('button', { name: 'Redeliver' }).click();
      await page.waitForURL(`${base}/portal/callbacks/${flakyId}?done=redelivered`);
      await until(
        async () =>
          (await headings()).length === attempts && (await page.locator('.status').first().textContent()) !== 'sending',
        {
          what: `attempt ${attempts} shown`,
          timeoutMs: 20_000,
        },
      );
    };
    // Pending: attempted now, as its schedule's next retry.
    await redeliver(2);
    // Failed by a 410 after its last retry, then redelivered: a fresh schedule's first attempt.
    rx.flaky.answer = (_h, _req, res) => res.writeHead(410).end('gone');
    await redeliver(3);
    await redeliver(4);
    expect(await headings()).toEqual([
      'Attempt 1: first attempt',
      'Attempt 2: retry 1 of 2',
      'Attempt 3: retry 2 of 2',
      'Attempt 4: first attempt after a redelivery',
    ]);
    expect(await page.locator('p.next').textContent()).toMatch(/^None: your receiver answered 410 Gone/);
    // Each attempt's request headers are its own: the fourth's timestamp is the fourth request's.
    const request = (await page.locator('.attempts pre.headers').nth(6).textContent())!;
    expect(request).toContain(`webhook-timestamp: ${rx.flaky.hits[3].headers['webhook-timestamp'] as string}`);
  });

  it("lists each message with an example body shaped as the receiver's real one, key for key, in order", async () => {
    await page.goto(`${base}/portal/events`);
    const got = bodies(rx.old);
    for (const code of [0, 1, 2, 3, 4]) {
      const example = JSON.parse((await page.locator(`pre[data-message="${code}"]`).textContent()) as string) as Body;
      const real = got.filter((b) => b.message === code);
      const pattern = (b: Body) =>
        Object.entries(b)
          .map(([k, v]) => `${k}:${v === null ? 'null' : typeof v}`)
          .join();
      expect(real.map((b) => Object.keys(b))).toContainEqual(Object.keys(example));
      expect(real.map(pattern)).toContain(pattern(example));
      for (const b of [example, ...real])
        for (const [k, v] of Object.entries(b)) if (k !== 'message') expect(String(v)).toMatch(UUID_OR_NULL);
    }
    await page.getByRole('heading', { name: 'operations.test' }).waitFor();
  });

  it('changes a callback URL: the count first, then the move; the next callback arrives at the new URL', async () => {
    await page.goto(`${base}/portal/urls`);
    const row = page.getByRole('row').filter({ hasText: rx.old.url('/hooks') });
    expect(await row.locator('td').first().textContent()).toBe('3');
    await page.getByLabel('From').selectOption(rx.old.url('/hooks'));
    await page.getByLabel('To').fill(rx.moved.url('/hooks'));
    await page.getByRole('button', { name: 'Count resources' }).click();
    await page.getByRole('status').filter({ hasText: '3 resources use' }).waitFor();
    copyFileSync(await browser.screenshot('portal-urls.png'), path.join(DOCS, 'portal-urls.png'));
    await page.getByRole('button', { name: 'Move 3 resources' }).click();
    await page.waitForURL(`${base}/portal/urls?moved=3`);
    await page.getByRole('status').filter({ hasText: '3 resources moved' }).waitFor();
    await page
      .getByRole('row')
      .filter({ hasText: rx.moved.url('/hooks') })
      .waitFor();
    const before = rx.old.hits.length;
    await change();
    await until(() => rx.moved.hits.length > 0, { what: 'the next callback at the new URL' });
    expect(rx.old.hits.length).toBe(before);
  });

  it('rolls the secret, shown once: the next callback verifies with it and, in the overlap, the old one', async () => {
    await page.goto(`${base}/portal/settings`);
    await page.getByRole('button', { name: 'Roll secret' }).click();
    await page.getByRole('heading', { name: 'New signing key' }).waitFor();
    secret = (await page.locator('pre.secret').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    const seen = rx.moved.hits.length;
    await change();
    await until(() => rx.moved.hits.length > seen, { what: 'a callback signed after the roll' });
    const hit = rx.moved.hits.at(-1)!;
    for (const key of [secret, p.signingSecret])
      expect(new Webhook(key).verify(hit.body, webhookHeaders(hit.headers))).toBeTruthy();
    await page.goto(`${base}/portal/settings`);
    expect(await page.content()).not.toContain(secret);
    const audit = (await t.admin('get', `/admin/v1/audit?targetId=${p.id}`).expect(200)).body.items as {
      action: string;
    }[];
    expect(audit.map((a) => a.action)).toContain('partner.signing-secret.rotate');
  });

  it('sends a test callback to a company picked from a list: its result appears with nothing pressed', async () => {
    await page.goto(`${base}/portal/test`);
    await page.getByLabel('Company name contains').fill('picker');
    await page.getByRole('button', { name: 'Search companies' }).click();
    expect(await page.locator('fieldset.companies label').count()).toBe(1);
    await page.getByLabel(/Picker Ltd/).check();
    await page.getByLabel('URL').fill(rx.test.url('/t'));
    await page.getByLabel('Message').selectOption('2');
    await page.getByRole('button', { name: 'Send test callback' }).click();
    await page.waitForURL(/\/portal\/test\?callback=/);
    testId = new URL(page.url()).searchParams.get('callback')!;
    await page.getByText('Not settled yet').waitFor();
    let navigations = 0;
    page.on('framenavigated', () => void navigations++);
    await page.getByText('HTTP 204').waitFor({ timeout: 20_000 });
    expect(navigations).toBe(0);
    expect(JSON.parse(rx.test.hits[0].body)).toMatchObject({ message: 2 });
    copyFileSync(await browser.screenshot('portal-test.png'), path.join(DOCS, 'portal-test.png'));
  });

  it('sends a test event to the Operations URL: signed as every event, shown delivered by itself', async () => {
    await page.goto(`${base}/portal/settings`);
    await page.getByLabel('Operations URL').fill(rx.ops.url('/ops'));
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await page.waitForURL(/\/portal\/settings\?event=/);
    eventId = new URL(page.url()).searchParams.get('event')!;
    await page.locator('#test-event').filter({ hasText: 'delivered' }).waitFor({ timeout: 20_000 });
    expect(rx.ops.hits).toHaveLength(1);
    const [hit] = rx.ops.hits;
    expect(hit.headers['webhook-id']).toBe(eventId);
    expect(JSON.parse(hit.body)).toEqual({ type: 'operations.test', timestamp: expect.any(String), data: {} });
    expect(new Webhook(secret).verify(hit.body, webhookHeaders(hit.headers))).toBeTruthy();
  });

  it('reads well at 390 and 1280 px: no word broken inside, no page too wide, no serious axe finding', async () => {
    const hour = (offset: number) => new Date(Date.now() + offset).toISOString().slice(0, 19);
    const window = `from=${hour(-3_600_000)}&to=${hour(3_600_000)}`;
    const pages = [
      '/portal',
      '/portal/callbacks',
      `/portal/callbacks/${flakyId}`,
      `/portal/callbacks/find?id=${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`,
      `/portal/urls?from=${encodeURIComponent(rx.moved.url('/hooks'))}&to=${encodeURIComponent(rx.old.url('/back'))}`,
      '/portal/events',
      `/portal/replay?${window}`,
      `/portal/replay?replayed=0&${window}`,
      `/portal/test?callback=${testId}`,
      `/portal/settings?event=${eventId}`,
    ];
    const problems: string[] = [];
    for (const width of WIDTHS) {
      const b = await openBrowser(undefined, { bypassCSP: true, viewport: { width, height: 900 } });
      try {
        await signIn(b.page);
        for (const at of pages) {
          await b.page.goto(`${base}${at}`);
          problems.push(...(await layoutProblems(b.page, `${at} at ${width} px`)));
          await b.screenshot(`portal-${width}-${pages.indexOf(at)}.png`);
        }
        // The page answering a key change (here the switch of scheme, which shows the new public key).
        await b.page.goto(`${base}/portal/settings`);
        await b.page.getByRole('button', { name: /^Switch to / }).click();
        await b.page.getByRole('heading', { name: 'New signing key' }).waitFor();
        problems.push(...(await layoutProblems(b.page, `the new key's page at ${width} px`)));
      } finally {
        await b.close();
      }
    }
    expect(problems).toEqual([]);
  }, 180_000);
});
