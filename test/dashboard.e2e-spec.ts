import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { CallbackQueue } from '../src/delivery/callback-queue.js';
import { openBrowser, TestBrowser } from './support/browser.js';
import { Receiver } from './support/receiver.js';
import { ADMIN_TOKEN, companyWithCallback, createPartner, Partner, startTestApp, TestApp, until } from './support/test-app.js';

const BASIC = `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`;

interface BoardJob {
  id: string;
  name: string;
  timestamp: number;
  delay: number;
  opts: { delay?: number };
  failedReason: string;
}

describe('the queue dashboard tells the truth about deliveries', () => {
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;
  let down: Receiver;
  let base: string;
  let browser: TestBrowser | undefined;
  // 410 until the partner fixes the endpoint; then 204.
  let goneFixed = false;
  let gone: Awaited<ReturnType<typeof companyWithCallback>>;
  let later: Awaited<ReturnType<typeof companyWithCallback>>;
  let deadId: string;
  let delayedId: string;
  const deliveredIds: string[] = [];

  const board = (path: string) => t.http().get(`/admin/queues/api${path}`).set('Authorization', BASIC);
  const boardJobs = async (status: string): Promise<BoardJob[]> =>
    (await board(`/queues?activeQueue=callbacks&status=${status}&page=1&jobsPerPage=50`).expect(200)).body.queues[0].jobs;
  const state = (id: string) => t.app.get(CallbackQueue).queue.getJobState(id);
  const row = async (id: string) =>
    (await t.sql<{ status: string; next_attempt_at: Date | null }>('SELECT status, next_attempt_at FROM callbacks WHERE id = $1', [id]))[0];

  beforeAll(async () => {
    rx = await Receiver.start();
    rx.answer = (h, _req, res) => {
      if (h.path === '/gone') return goneFixed ? res.writeHead(204).end() : res.writeHead(410).end('this endpoint is gone');
      if (h.path === '/later') return rx.on('/later').length === 1 ? res.writeHead(500).end('busy') : res.writeHead(204).end();
      if (h.path.startsWith('/bulk-gone')) return rx.on(h.path).length === 1 ? res.writeHead(410).end() : res.writeHead(204).end();
      if (h.path === '/bulk-later') return rx.on(h.path).length === 1 ? res.writeHead(500).end() : res.writeHead(204).end();
      res.writeHead(204).end();
    };
    down = await Receiver.start();
    down.answer = (_h, _req, res) => res.writeHead(503).end('down');
    // One retry an hour away: the 500 leaves a delayed job; three 503s open down's circuit.
    t = await startTestApp({ CALLBACK_RETRY_SCHEDULE: '1h', CALLBACK_BREAKER_THRESHOLD: '3' });
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${((t.app.getHttpServer() as Server).address() as AddressInfo).port}`;
    p = await createPartner(t);

    const ok = await companyWithCallback(t, p, rx.url('/ok/secret-token?key=k1'));
    for (let i = 0; i < 3; i++) deliveredIds.push(await ok.change());
    gone = await companyWithCallback(t, p, rx.url('/gone'));
    deadId = await gone.change();
    later = await companyWithCallback(t, p, rx.url('/later'));
    delayedId = await later.change();
    const outage = await companyWithCallback(t, p, down.url('/hook'));
    for (let i = 0; i < 3; i++) await outage.change();

    await until(async () => (await state(deadId)) === 'failed', { what: 'the dead letter as a failed job', timeoutMs: 20000 });
    await until(async () => (await state(delayedId)) === 'delayed' && (await row(delayedId)).next_attempt_at !== null, { what: 'a delayed job', timeoutMs: 20000 });
    await until(async () => (await Promise.all(deliveredIds.map(state))).every((s) => s === 'completed'), { what: 'completed jobs', timeoutMs: 20000 });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await rx?.close();
    await down?.close();
  });

  it('names each job by message, company and destination origin, never the path or query', async () => {
    const completed = await boardJobs('completed');
    const [c] = (await t.sql<{ company_id: string }>('SELECT company_id FROM callbacks WHERE id = $1', [deliveredIds[0]])).map((r) => r.company_id);
    const job = completed.find((j) => j.id === deliveredIds[0])!;
    expect(job.name).toBe(`0 CreditLimitUpdated · company ${c} · http://127.0.0.1:${rx.port}`);
    for (const j of completed) expect(j.name).not.toMatch(/secret-token|key=/);
    expect(completed.map((j) => j.id).sort()).toEqual(expect.arrayContaining([...deliveredIds].sort()));
  });

  it('shows a dead letter as a failed job with its last error and attempt log', async () => {
    const failed = await boardJobs('failed');
    expect(failed.map((j) => j.id)).toEqual([deadId]);
    expect(failed[0].failedReason).toBe('HTTP 410');
    const logs = (await board(`/queues/callbacks/${deadId}/logs`).expect(200)).body as string[];
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(/^attempt 1: HTTP 410 in \d+ ms from 127\.0\.0\.1 → failed: HTTP 410$/);
  });

  it("shows a delayed job's run time as the database's nextAttemptAt", async () => {
    const job = (await boardJobs('delayed')).find((j) => j.id === delayedId)!;
    const { next_attempt_at } = await row(delayedId);
    // bull-board shows timestamp + (opts.delay || delay) as "will run at".
    expect(job.timestamp + (job.opts.delay || job.delay)).toBe(next_attempt_at!.getTime());
    const logs = (await board(`/queues/callbacks/${delayedId}/logs`).expect(200)).body as string[];
    expect(logs[0]).toBe(`attempt 1: HTTP 500 in ${logs[0].match(/in (\d+) ms/)![1]} ms from 127.0.0.1 → retry at ${next_attempt_at!.toISOString()}`);
  });

  it('names the destinations with an open circuit in the queue description', async () => {
    const description = await until(
      async () => {
        const d = (await board('/queues').expect(200)).body.queues[0].description as string;
        return d.includes('Open circuits') ? d : null;
      },
      { what: 'the open circuit in the description' },
    );
    expect(description).toContain(`Open circuits (1): http://127.0.0.1:${down.port} open since`);
    expect(description).toContain('(last error: HTTP 503)');
  });

  it.each([
    ['post', '/queues/callbacks/add', { name: 'x', data: { callbackId: 'x' }, options: {} }],
    ['patch', '/queues/callbacks/DEAD/update-data', { jobData: { callbackId: 'x' } }],
    ['patch', '/queues/callbacks/DELAYED/delay', { runAt: 0 }],
    ['put', '/queues/callbacks/DEAD/clean', undefined],
    ['put', '/queues/callbacks/clean/completed', undefined],
    ['put', '/queues/callbacks/retry/completed', undefined],
    ['put', '/queues/callbacks/DELIVERED/retry', undefined],
    ['put', '/queues/callbacks/empty', undefined],
    ['put', '/queues/callbacks/pause', undefined],
    ['put', '/queues/pause', undefined],
    ['put', '/queues/callbacks/obliterate', {}],
    ['put', '/queues/callbacks/concurrency', { concurrency: 1 }],
  ] as const)('refuses %s %s: it would bypass PostgreSQL', async (method, path, body) => {
    const ids: Record<string, string> = { DEAD: deadId, DELAYED: delayedId, DELIVERED: deliveredIds[0] };
    const url = `/admin/queues/api${path.replace(/DEAD|DELAYED|DELIVERED/, (k) => ids[k])}`;
    const req = t.http()[method](url).set('Authorization', BASIC);
    const res = await (body === undefined ? req : req.send(body));
    expect(res.status).toBe(405);
    expect(res.body.message).toMatch(/^Switched off/);
    expect(await state(deadId)).toBe('failed');
    expect(await state(delayedId)).toBe('delayed');
    expect((await board('/queues').expect(200)).body.queues[0].isPaused).toBe(false);
  });

  it('in a real browser: reads a dead letter, retries it and sees it delivered; promotes a delayed one and sees it attempted', async () => {
    browser = await openBrowser({ username: 'admin', password: ADMIN_TOKEN });
    const { page } = browser;
    const card = (id: string) => page.locator('[class*="card-"]', { has: page.locator(`a[href*="/callbacks/${id}"]`) });
    const confirm = async () => {
      // bull-board asks before a job action (its default setting).
      const yes = page.getByRole('alertdialog').getByRole('button', { name: 'Confirm' });
      await yes.waitFor({ timeout: 5000 });
      await yes.click();
    };

    // The Failed tab: the dead letter, its error, its attempt log, and Retry as its only action.
    await page.goto(`${base}/admin/queues/queue/callbacks?status=failed`);
    const dead = card(deadId);
    await dead.waitFor();
    await expect(dead.textContent()).resolves.toContain('CreditLimitUpdated');
    // Logs is the card's first tab (queue-dashboard.ts); its lines arrive in a request of their
    // own after the card, so wait for them rather than read the card once.
    const tab = (name: string) => dead.getByRole('button', { name }).or(dead.getByText(name, { exact: true })).first();
    await dead.getByText(/attempt 1: HTTP 410 in \d+ ms from 127\.0\.0\.1 → failed: HTTP 410/).waitFor();
    await tab('Error').click();
    await dead.getByText('HTTP 410', { exact: true }).waitFor();
    await tab('Logs').click();
    await dead.getByText(/attempt 1: HTTP 410 in \d+ ms from 127\.0\.0\.1/).waitFor();
    const actions = dead.locator('[class*="jobActions-"] button:visible');
    expect(await actions.count()).toBe(1);
    expect(await actions.locator('.lucide-refresh-cw').count()).toBe(1);
    expect(await page.locator('button[aria-haspopup="menu"]:visible').count()).toBe(0);
    const shot = await browser.screenshot('dashboard-failed-callback.png');
    console.log(`dashboard screenshot: ${shot}`);

    goneFixed = true;
    await actions.click();
    await confirm();
    await until(() => rx.on('/gone').length === 2, { what: 'the redelivery at the receiver', timeoutMs: 20000 });
    expect(rx.on('/gone').map((h) => h.headers['webhook-id'])).toEqual([deadId, deadId]);
    await until(async () => (await row(deadId)).status === 'delivered', { what: 'delivered in the database', timeoutMs: 20000 });
    await until(async () => (await state(deadId)) === 'completed', { what: 'a completed job', timeoutMs: 20000 });

    // The Delayed tab: Promote is the only action, and it attempts the callback now.
    await page.goto(`${base}/admin/queues/queue/callbacks?status=delayed`);
    const waiting = card(delayedId);
    await waiting.waitFor();
    await waiting.getByText('Will run at').waitFor();
    const promote = waiting.locator('[class*="jobActions-"] button:visible');
    expect(await promote.count()).toBe(1);
    expect(await promote.locator('.lucide-corner-up-left').count()).toBe(1);
    await promote.click();
    await confirm();
    await until(() => rx.on('/later').length === 2, { what: 'the promoted attempt at the receiver', timeoutMs: 20000 });
    expect(rx.on('/later').map((h) => h.headers['webhook-id'])).toEqual([delayedId, delayedId]);
    await until(async () => (await row(delayedId)).status === 'delivered', { what: 'the promoted one delivered', timeoutMs: 20000 });

    // The page needed nothing from the internet, and its scripts ran without errors.
    expect(browser.offLoopback).toEqual([]);
    expect(browser.pageErrors).toEqual([]);
  });

  it('Retry all on the Failed tab redelivers every failed job; Promote all attempts every delayed one now', async () => {
    const dead: string[] = [];
    for (const path of ['/bulk-gone-1', '/bulk-gone-2']) dead.push(await (await companyWithCallback(t, p, rx.url(path))).change());
    const delayed = await (await companyWithCallback(t, p, rx.url('/bulk-later'))).change();
    await until(async () => (await Promise.all(dead.map(state))).every((s) => s === 'failed'), { what: 'two failed jobs', timeoutMs: 20000 });
    await until(async () => (await state(delayed)) === 'delayed', { what: 'a delayed job', timeoutMs: 20000 });

    const retried = await t.http().put('/admin/queues/api/queues/callbacks/retry/failed').set('Authorization', BASIC).expect(200);
    expect(retried.body).toEqual({ retried: 2, skipped: 0 });
    await t.http().put('/admin/queues/api/queues/callbacks/promote').set('Authorization', BASIC).expect(200);
    for (const [path, id] of [['/bulk-gone-1', dead[0]], ['/bulk-gone-2', dead[1]], ['/bulk-later', delayed]]) {
      await until(() => rx.on(path).length === 2, { what: `the second attempt of ${path}`, timeoutMs: 20000 });
      expect(rx.on(path).map((h) => h.headers['webhook-id'])).toEqual([id, id]);
      await until(async () => (await row(id)).status === 'delivered', { what: `${path} delivered`, timeoutMs: 20000 });
    }
  });
});
