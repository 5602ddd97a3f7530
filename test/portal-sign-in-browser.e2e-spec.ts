/**
 * The portal's door in Debian's Chromium, with an attacker's site on another loopback origin
 * (127.0.0.2: another site than 127.0.0.1): that site sends a signed-in browser to the attacker's
 * own link, or posts it the link's form, and whose portal it is does not change; links made before
 * a revocation open nothing; a HEAD uses no link; an unknown path is the portal's page with its
 * headers; quick requests meet a 429 with Retry-After; axe-core on each of these pages.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page, Response } from 'playwright-core';
import { PARTNER_RATE_LIMIT } from '../src/partners/rate-limiter.js';
import { openBrowser, TestBrowser } from './support/browser.js';
import { createPartner, harness, Partner, TestApp, until } from './support/harness.js';
import { linkToken } from './support/portal.js';

/** Portal requests a second per partner (and per address without a session) in this suite: low enough to reach. */
const LIMIT = 20;

describe('the portal sign-in in a browser, against another site', () => {
  // Declared before the harness, so it runs first: the browser (a client of the app, with
  // keep-alive connections to it) and the other site close before the app does.
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => evil?.close(resolve));
  });
  const e2e = harness(
    { ROLE: 'api' },
    { configure: (b) => b.overrideProvider(PARTNER_RATE_LIMIT).useValue(LIMIT), partner: 'Victim Bank' },
  );
  let t: TestApp;
  let victim: Partner;
  let attacker: Partner;
  let base: string;
  let evil: http.Server;
  let evilBase: string;
  let browser: TestBrowser;
  let page: Page;

  /** A link of the partner, at the address the test serves the app on. */
  const linkOf = async (apiKey: string) => {
    const url = new URL((await t.as(apiKey, 'post', '/v1/partner/portal-links', {}).expect(201)).body.url as string);
    return `${base}${url.pathname}${url.search}`;
  };
  const used = async (link: string) =>
    (
      await t.sql<{ used: boolean }>(
        `SELECT used_at IS NOT NULL AS used FROM portal_links WHERE token_hash = encode(sha256($1::bytea), 'hex')`,
        [linkToken(link)],
      )
    )[0].used;
  /** Whose portal the browser shows: the partner named in its header. */
  const whose = async (on: Page = page) => {
    expect((await on.goto(`${base}/portal`))!.status()).toBe(200);
    return on.locator('.brand span').textContent();
  };
  const signIn = async (link: string, on: Page = page) => {
    expect((await on.goto(link))!.status()).toBe(200);
    await on.getByRole('button', { name: 'Sign in' }).click();
    await on.waitForURL(`${base}/portal`);
  };

  beforeAll(async () => {
    ({ t, p: victim } = e2e);
    attacker = await createPartner(t, 'Attacker Bank');
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    // The attacker's site: one page navigates the browser to a URL, another posts a form to the portal at once.
    evil = http.createServer((req, res) => {
      const q = new URL(req.url ?? '/', 'http://x').searchParams;
      const attr = (s: string) => s.replace(/[^A-Za-z0-9_:/.?=&%-]/g, '');
      const body = req.url?.startsWith('/navigate')
        ? `<script>location.href = ${JSON.stringify(attr(q.get('to') ?? ''))};</script>`
        : `<form method="post" action="${base}/portal/login">
             <input type="hidden" name="token" value="${attr(q.get('token') ?? '')}"></form>
           <script>document.forms[0].submit();</script>`;
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(`<!DOCTYPE html><html lang="en"><title>A page elsewhere</title><body>${body}</body></html>`);
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.2', resolve));
    evilBase = `http://127.0.0.2:${(evil.address() as AddressInfo).port}`;
    browser = await openBrowser(undefined, { viewport: { width: 1000, height: 800 } });
    page = browser.page;
  }, 60_000);

  it("a page elsewhere sending a signed-in browser to another's link, or posting its form: no change", async () => {
    await signIn(await linkOf(victim.apiKey));
    expect(await whose()).toBe('Victim Bank');

    // Navigated to the attacker's link: its page, naming the attacker's partner; no session changes hands.
    const navigated = await linkOf(attacker.apiKey);
    const landed = page.waitForResponse((r) => r.url().startsWith(`${base}/portal/login`));
    await page.goto(`${evilBase}/navigate?to=${encodeURIComponent(navigated)}`);
    expect((await landed).status()).toBe(200);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.getByText('Attacker Bank').waitFor();
    expect(await whose()).toBe('Victim Bank');
    expect(await used(navigated)).toBe(false);

    // Posted the link's form from the other site: refused 403, nothing used, no cookie set.
    const posted = await linkOf(attacker.apiKey);
    const refused = page.waitForResponse((r) => r.url() === `${base}/portal/login` && r.request().method() === 'POST');
    await page.goto(`${evilBase}/post?token=${linkToken(posted)}`);
    const answer: Response = await refused;
    expect(answer.status()).toBe(403);
    expect(await answer.headerValue('set-cookie')).toBeNull();
    await page.getByText('nothing was used').waitFor();
    expect(await whose()).toBe('Victim Bank');
    expect(await used(posted)).toBe(false);
    expect(browser.offLoopback).toEqual([]);
  });

  it('a link made before a 0-hour rotation, and one before DELETE …/portal-sessions, open no session', async () => {
    await page.context().clearCookies();
    const beforeRotation = await linkOf(victim.apiKey);
    const { apiKey } = (
      await t.admin('post', `/admin/v1/partners/${victim.id}/rotate-api-key`, { previousKeyValidHours: 0 }).expect(200)
    ).body;
    victim = { ...victim, apiKey };
    expect((await page.goto(beforeRotation))!.status()).toBe(410);
    await page.getByText('was ended with your portal sessions').waitFor();
    expect(await page.getByRole('button', { name: 'Sign in' }).count()).toBe(0);

    // Its sign-in page open in the browser when the operator ends the sessions: the button opens nothing.
    const beforeDelete = await linkOf(apiKey);
    expect((await page.goto(beforeDelete))!.status()).toBe(200);
    await t.admin('delete', `/admin/v1/partners/${victim.id}/portal-sessions`).expect(204);
    const pressed = page.waitForResponse((r) => r.url() === `${base}/portal/login` && r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Sign in' }).click();
    expect((await pressed).status()).toBe(410);
    await page.getByText('was ended with your portal sessions').waitFor();
    expect(await page.context().cookies()).toEqual([]);
    expect((await page.goto(`${base}/portal`))!.status()).toBe(401);
  });

  it('a HEAD of a link (a preview, a mail scanner) sets no cookie and leaves the link usable', async () => {
    await page.context().clearCookies();
    const link = await linkOf(victim.apiKey);
    const head = await page.context().request.head(link, { maxRedirects: 0 });
    expect(head.status()).toBe(200);
    expect(head.headers()['set-cookie']).toBeUndefined();
    expect(await page.context().cookies()).toEqual([]);
    expect(await used(link)).toBe(false);
    await signIn(link);
    expect(await whose()).toBe('Victim Bank');
  });

  it("an unknown portal path is the portal's page, with its CSP and no-store; OPTIONS too", async () => {
    const res = (await page.goto(`${base}/portal/no-such-page`))!;
    expect(res.status()).toBe(404);
    expect(await res.headerValue('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(await res.headerValue('cache-control')).toBe('no-store');
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
    expect(browser.refusedByPolicy).toEqual([]);
    const options = await page.context().request.fetch(`${base}/portal/settings`, { method: 'OPTIONS' });
    expect(options.status()).toBe(404);
    expect(options.headers()['content-security-policy']).toContain("default-src 'none'");
    expect(options.headers()['cache-control']).toBe('no-store');
  });

  it('many quick requests of a session meet the 429 page, with Retry-After', async () => {
    await signIn(await linkOf(victim.apiKey));
    let limited: Response | null = null;
    await until(
      async () => {
        // The session's own requests, from the browser's cookie jar, then the page itself in the same second.
        await Promise.all(
          Array.from({ length: 2 * LIMIT }, () => page.context().request.get(`${base}/portal/callbacks`)),
        );
        const res = (await page.goto(`${base}/portal/callbacks`))!;
        if (res.status() === 429) limited = res;
        return limited !== null;
      },
      { what: 'a 429 page in the browser', timeoutMs: 15_000 },
    );
    expect(await limited!.headerValue('retry-after')).toBe('1');
    await page.getByRole('heading', { name: 'Too many requests' }).waitFor();
    expect(await limited!.headerValue('content-security-policy')).toContain("frame-ancestors 'none'");
  });

  it('passes axe-core on the sign-in page and the pages that refuse (410, 403, 401, 404, 429)', async () => {
    const narrow = await openBrowser(undefined, { bypassCSP: true, viewport: { width: 390, height: 844 } });
    try {
      const n = narrow.page;
      const problems: string[] = [];
      const check = async (what: string) => {
        await n.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
        const violations = await n.evaluate<{ id: string; impact: string; nodes: number }[]>(
          'axe.run().then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length })))',
        );
        for (const v of violations.filter((x) => x.impact === 'serious' || x.impact === 'critical'))
          problems.push(`${what}: ${v.id} (${v.impact}, ${v.nodes} nodes)`);
        const [scrollWidth, width] = await n.evaluate<number[]>(
          '[document.documentElement.scrollWidth, window.innerWidth]',
        );
        if (scrollWidth > width) problems.push(`${what}: ${scrollWidth} px wide at ${width}`);
      };
      const link = await linkOf(victim.apiKey);
      await n.goto(link);
      await check('the sign-in page');
      await n.goto(`${evilBase}/post?token=${linkToken(link)}`);
      await n.getByText('nothing was used').waitFor();
      await check('a Sign in from another site (403)');
      await n.goto(`${base}/portal`);
      await check('no session (401)');
      await n.goto(`${base}/portal/no-such-page`);
      await check('not found (404)');
      await n.goto(link);
      await n.getByRole('button', { name: 'Sign in' }).click();
      await n.waitForURL(`${base}/portal`);
      await n.goto(link);
      await check('a used link (410)');
      await until(
        async () => {
          await Promise.all(
            Array.from({ length: 2 * LIMIT }, () => n.context().request.get(`${base}/portal/callbacks`)),
          );
          return (await n.goto(`${base}/portal/callbacks`))!.status() === 429;
        },
        { what: 'a 429 page', timeoutMs: 15_000 },
      );
      await check('too many requests (429)');
      expect(problems).toEqual([]);
    } finally {
      await narrow.close();
    }
  }, 60_000);
});
