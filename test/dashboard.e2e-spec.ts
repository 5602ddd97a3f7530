import type { AddressInfo } from 'node:net';
import { CallbackQueue } from '../src/delivery/callback-queue.js';
import { openBrowser, TestBrowser } from './support/browser.js';
import { Receiver } from './support/receiver.js';
import {
  ADMIN_TOKEN,
  companyWithCallback,
  createPartner,
  harness,
  Partner,
  TestApp,
  until,
} from './support/harness.js';

const BASIC = `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`;

interface BoardJob {
  id: string;
  name: string;
  data: unknown;
  timestamp: number;
  processedOn: number | null;
  finishedOn: number | null;
  attempts: number;
  delay: number;
  opts: { delay?: number };
  failedReason: string;
}

interface Row {
  status: string;
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  created_at: Date;
  attempt_count: number;
  last_error: string | null;
}

describe('the queue dashboard tells PostgreSQL’s truth about deliveries', () => {
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;
  let base: string;
  let browser: TestBrowser | undefined;
  // 410 until the partner fixes the endpoint; then 204.
  let goneFixed = false;
  let deadId: string;
  let neverQueuedId: string;
  let delayedId: string;
  const deliveredIds: string[] = [];

  const board = (path: string) => t.http().get(`/admin/queues/api${path}`).set('Authorization', BASIC);
  const boardQueue = async (status: string, page = 1, perPage = 50) =>
    (await board(`/queues?activeQueue=callbacks&status=${status}&page=${page}&jobsPerPage=${perPage}`).expect(200)).body
      .queues[0] as {
      counts: Record<string, number>;
      pagination: { pageCount: number };
      jobs: BoardJob[];
      description: string;
    };
  const boardJobs = async (status: string, page = 1, perPage = 50) => (await boardQueue(status, page, perPage)).jobs;
  const logs = async (id: string) => (await board(`/queues/callbacks/${id}/logs`).expect(200)).body as string[];
  const row = async (id: string) =>
    (
      await t.sql<Row>(
        'SELECT status, next_attempt_at, delivered_at, created_at, attempt_count, last_error FROM callbacks WHERE id = $1',
        [id],
      )
    )[0];
  const lastAttempt = async (id: string) =>
    (
      await t.sql<{ started_at: Date; duration_ms: number }>(
        'SELECT started_at, duration_ms FROM callback_attempts WHERE callback_id = $1 ORDER BY number DESC LIMIT 1',
        [id],
      )
    )[0];
  const settled = (id: string, status: string, what: string) =>
    until(async () => (await row(id)).status === status, { what, timeoutMs: 20000 });

  // One retry an hour away: the 500 leaves a delayed callback; three 503s open a circuit.
  const e2e = harness({ CALLBACK_RETRY_SCHEDULE: '1h', CALLBACK_BREAKER_THRESHOLD: '3' }, { partner: null });
  beforeAll(async () => {
    ({ t, rx } = e2e);
    rx.answer = (h, _req, res) => {
      if (h.path === '/gone')
        return goneFixed ? res.writeHead(204).end() : res.writeHead(410).end('this endpoint is gone');
      if (h.path === '/later')
        return rx.on('/later').length === 1 ? res.writeHead(500).end('busy') : res.writeHead(204).end();
      if (h.path.startsWith('/bulk-gone'))
        return rx.on(h.path).length === 1 ? res.writeHead(410).end() : res.writeHead(204).end();
      if (h.path === '/bulk-later')
        return rx.on(h.path).length === 1 ? res.writeHead(500).end() : res.writeHead(204).end();
      if (h.path.startsWith('/ops-gone')) return res.writeHead(410).end();
      res.writeHead(204).end();
    };
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    p = await createPartner(t);

    const ok = await companyWithCallback(t, p, rx.url('/ok/secret-token?key=k1'));
    for (let i = 0; i < 3; i++) deliveredIds.push(await ok.change());
    deadId = await (await companyWithCallback(t, p, rx.url('/gone'))).change();
    delayedId = await (await companyWithCallback(t, p, rx.url('/later'))).change();

    await settled(deadId, 'failed', 'the dead letter');
    await until(async () => (await row(delayedId)).attempt_count === 1, {
      what: 'the first attempt of the delayed one',
      timeoutMs: 20000,
    });
    for (const id of deliveredIds) await settled(id, 'delivered', 'delivered callbacks');

    // A dead letter that never had a job: failed in PostgreSQL without an attempt (as when its
    // destination stayed open until its schedule ran out).
    [{ id: neverQueuedId }] = await t.sql<{ id: string }>(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, last_error)
       SELECT partner_id, company_id, message, $1, body, 'failed', $2 FROM callbacks WHERE id = $3 RETURNING id`,
      [
        rx.url('/never-queued/tok_123?key=k2'),
        `destination ${rx.url('/never-queued/tok_123?key=k2')} open since 10:00 (schedule exhausted)`,
        deliveredIds[0],
      ],
    );
    // Redis holds no finished job (as in delivery core v2): everything below is read from PostgreSQL.
    const queue = t.app.get(CallbackQueue).queue;
    await queue.clean(0, 0, 'completed');
    await queue.clean(0, 0, 'failed');
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('names each job by message, partner, company and destination origin, never the path or query', async () => {
    const completed = await boardJobs('completed');
    const [{ company_id: c }] = await t.sql<{ company_id: string }>('SELECT company_id FROM callbacks WHERE id = $1', [
      deliveredIds[0],
    ]);
    const job = completed.find((j) => j.id === deliveredIds[0])!;
    expect(job.name).toBe(`0 CreditLimitUpdated · partner Acme Bank · company ${c} · http://127.0.0.1:${rx.port}`);
    expect(job.data).toEqual({ callbackId: deliveredIds[0] });
    for (const j of [...completed, ...(await boardJobs('failed'))])
      expect(`${j.name} ${j.failedReason}`).not.toMatch(/secret-token|tok_123|key=/);
  });

  it('shows delivered callbacks as completed jobs, newest delivery first, with their times from the database', async () => {
    const completed = await boardJobs('completed');
    expect(completed.map((j) => j.id).sort()).toEqual([...deliveredIds].sort());
    const finished = completed.map((j) => j.finishedOn!);
    expect(finished).toEqual([...finished].sort((a, b) => b - a));
    for (const j of completed) {
      const r = await row(j.id);
      const a = await lastAttempt(j.id);
      expect([j.timestamp, j.processedOn, j.finishedOn, j.attempts]).toEqual([
        r.created_at.getTime(),
        a.started_at.getTime(),
        r.delivered_at!.getTime(),
        1,
      ]);
    }
    expect((await logs(deliveredIds[0]))[0]).toMatch(
      /^attempt 1 at \S+Z: HTTP 204 in \d+ ms from 127\.0\.0\.1 → delivered$/,
    );
  });

  it('shows a dead letter as a failed job with its last error, failure time and attempt log', async () => {
    const job = (await boardJobs('failed')).find((j) => j.id === deadId)!;
    const a = await lastAttempt(deadId);
    expect(job.failedReason).toBe('HTTP 410');
    expect([job.processedOn, job.finishedOn]).toEqual([a.started_at.getTime(), a.started_at.getTime() + a.duration_ms]);
    expect(await logs(deadId)).toEqual([
      `attempt 1 at ${a.started_at.toISOString()}: HTTP 410 in ${a.duration_ms} ms from 127.0.0.1 → failed: HTTP 410`,
    ]);
  });

  it('shows a dead letter that never had a job, with its reason cut to the origin', async () => {
    expect(await t.app.get(CallbackQueue).queue.getJob(neverQueuedId)).toBeUndefined();
    const job = (await boardJobs('failed')).find((j) => j.id === neverQueuedId)!;
    expect(job.failedReason).toBe(`destination http://127.0.0.1:${rx.port} open since 10:00 (schedule exhausted)`);
    expect([job.attempts, job.processedOn, job.finishedOn]).toEqual([0, null, null]);
    const { created_at } = await row(neverQueuedId);
    expect(await logs(neverQueuedId)).toEqual([
      `created at ${created_at.toISOString()}, no attempt since → failed: destination http://127.0.0.1:${rx.port} open since 10:00 (schedule exhausted)`,
    ]);
  });

  it('lists every failed callback, newest first, page by page', async () => {
    const ids = (await t.sql<{ id: string }>(`SELECT id FROM callbacks WHERE status = 'failed' ORDER BY seq DESC`)).map(
      (r) => r.id,
    );
    expect(ids).toEqual([neverQueuedId, deadId]);
    const first = await boardQueue('failed', 1, 1);
    expect([first.counts.failed, first.pagination.pageCount, first.jobs.map((j) => j.id)]).toEqual([
      2,
      2,
      [neverQueuedId],
    ]);
    expect((await boardJobs('failed', 2, 1)).map((j) => j.id)).toEqual([deadId]);
    expect((await boardQueue('failed')).jobs.map((j) => j.id)).toEqual(ids);
  });

  it("shows a delayed callback's run time as the database's next_attempt_at, and never as a failed job", async () => {
    const { next_attempt_at } = await row(delayedId);
    expect(next_attempt_at!.getTime()).toBeGreaterThan(Date.now() + 30 * 60_000);
    const show = async () => (await boardJobs('delayed')).find((j) => j.id === delayedId)!;
    // bull-board shows timestamp + (opts.delay || delay) as "will run at".
    const job = await show();
    expect(job.timestamp + (job.opts.delay || job.delay)).toBe(next_attempt_at!.getTime());
    expect(job.failedReason).toBe('');
    const a = await lastAttempt(delayedId);
    expect(await logs(delayedId)).toEqual([
      `attempt 1 at ${a.started_at.toISOString()}: HTTP 500 in ${a.duration_ms} ms from 127.0.0.1 → next attempt at ${next_attempt_at!.toISOString()}`,
    ]);
    expect((await boardJobs('failed')).map((j) => j.id)).not.toContain(delayedId);

    // Any delay up to 24 h (a Retry-After): shown as PostgreSQL has it.
    const [{ next_attempt_at: later }] = await t.sql<{ next_attempt_at: Date }>(
      `UPDATE callbacks SET next_attempt_at = now() + interval '23 hours 59 minutes' WHERE id = $1 RETURNING next_attempt_at`,
      [delayedId],
    );
    const moved = await show();
    expect(moved.timestamp + moved.delay).toBe(later.getTime());
    const counts = (await boardQueue('delayed')).counts;
    expect([counts.delayed, counts.failed, counts.completed, counts.active]).toEqual([1, 2, 3, 0]);
  });

  it.each([
    ['post', '/queues/callbacks/add', { name: 'x', data: { callbackId: 'x' }, options: {} }],
    ['patch', '/queues/callbacks/DEAD/update-data', { jobData: { callbackId: 'x' } }],
    ['patch', '/queues/callbacks/DELAYED/delay', { runAt: 0 }],
    ['put', '/queues/callbacks/DEAD/clean', undefined],
    ['put', '/queues/callbacks/clean/completed', undefined],
    ['put', '/queues/callbacks/retry/completed', undefined],
    ['put', '/queues/callbacks/DELIVERED/retry', undefined],
    ['put', '/queues/callbacks/DELAYED/retry', undefined],
    ['put', '/queues/callbacks/DEAD/promote', undefined],
    ['put', '/queues/callbacks/DELIVERED/promote', undefined],
    ['put', '/queues/callbacks/empty', undefined],
    ['put', '/queues/callbacks/pause', undefined],
    ['put', '/queues/pause', undefined],
    ['put', '/queues/callbacks/obliterate', {}],
    ['put', '/queues/callbacks/concurrency', { concurrency: 1 }],
  ] as const)('refuses %s %s: it would bypass PostgreSQL', async (method, path, body) => {
    const ids: Record<string, string> = { DEAD: deadId, DELAYED: delayedId, DELIVERED: deliveredIds[0] };
    // One at a time: the test's single pg client runs one query at a time.
    const rows = async () => {
      const all: Row[] = [];
      for (const id of Object.values(ids)) all.push(await row(id));
      return all;
    };
    const before = await rows();
    const url = `/admin/queues/api${path.replace(/DEAD|DELAYED|DELIVERED/, (k) => ids[k])}`;
    const req = t.http()[method](url).set('Authorization', BASIC);
    const res = await (body === undefined ? req : req.send(body));
    expect(res.status).toBe(405);
    expect(res.body.message).toMatch(/^Switched off/);
    expect(await rows()).toEqual(before);
    expect((await board('/queues').expect(200)).body.queues[0].isPaused).toBe(false);
  });

  it('in a real browser: reads dead letters, retries one and sees it delivered; promotes a delayed one and sees it attempted', async () => {
    browser = await openBrowser({ username: 'admin', password: ADMIN_TOKEN });
    const { page } = browser;
    const card = (id: string) => page.locator('[class*="card-"]', { has: page.locator(`a[href*="/callbacks/${id}"]`) });
    const confirm = async () => {
      // bull-board asks before a job action (its default setting).
      const yes = page.getByRole('alertdialog').getByRole('button', { name: 'Confirm' });
      await yes.waitFor({ timeout: 5000 });
      await yes.click();
    };

    // The Failed tab: both dead letters, their errors and attempt logs, Retry as the only action.
    await page.goto(`${base}/admin/queues/queue/callbacks?status=failed`);
    await card(neverQueuedId)
      .getByText(/created at \S+Z, no attempt since → failed: destination http:\/\/127\.0\.0\.1:\d+ open since/)
      .waitFor();
    const dead = card(deadId);
    await dead.waitFor();
    await expect(dead.textContent()).resolves.toContain('CreditLimitUpdated');
    // Logs is the card's first tab (dashboard-mount.ts); its lines arrive in a request of their
    // own after the card, so wait for them rather than read the card once.
    const tab = (name: string) =>
      dead
        .getByRole('button', { name })
        .or(dead.getByText(name, { exact: true }))
        .first();
    await dead.getByText(/attempt 1 at \S+Z: HTTP 410 in \d+ ms from 127\.0\.0\.1 → failed: HTTP 410/).waitFor();
    await tab('Error').click();
    await dead.getByText('HTTP 410', { exact: true }).waitFor();
    await tab('Logs').click();
    await dead.getByText(/attempt 1 at \S+Z: HTTP 410/).waitFor();
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
    await settled(deadId, 'delivered', 'delivered in the database');
    expect((await boardJobs('completed')).map((j) => j.id)).toContain(deadId);
    expect((await boardJobs('failed')).map((j) => j.id)).toEqual([neverQueuedId]);

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
    // Due now in PostgreSQL (or already attempted), then attempted.
    const promoted = async () => {
      const r = await row(delayedId);
      return r.attempt_count === 2 || (r.next_attempt_at !== null && r.next_attempt_at.getTime() <= Date.now());
    };
    await until(promoted, { what: 'the promotion in the database' });
    await until(() => rx.on('/later').length === 2, { what: 'the promoted attempt at the receiver', timeoutMs: 20000 });
    expect(rx.on('/later').map((h) => h.headers['webhook-id'])).toEqual([delayedId, delayedId]);
    await settled(delayedId, 'delivered', 'the promoted one delivered');

    // The page needed nothing from the internet, and its scripts ran without errors.
    expect(browser.offLoopback).toEqual([]);
    expect(browser.pageErrors).toEqual([]);
    // Its content security policy (helmet's headers) refused nothing the page does.
    expect(browser.refusedByPolicy).toEqual([]);
  });

  it('Retry all on the Failed tab redelivers every failed callback; Promote all attempts every delayed one now', async () => {
    const dead: string[] = [];
    for (const path of ['/bulk-gone-1', '/bulk-gone-2'])
      dead.push(await (await companyWithCallback(t, p, rx.url(path))).change());
    const delayed = await (await companyWithCallback(t, p, rx.url('/bulk-later'))).change();
    for (const id of dead) await settled(id, 'failed', 'two more dead letters');
    await until(async () => (await row(delayed)).attempt_count === 1, { what: 'a delayed callback', timeoutMs: 20000 });
    const failed = [neverQueuedId, ...dead];
    expect((await boardQueue('failed')).counts.failed).toBe(3);

    const retried = await t
      .http()
      .put('/admin/queues/api/queues/callbacks/retry/failed')
      .set('Authorization', BASIC)
      .expect(200);
    expect(retried.body).toEqual({ retried: 3, skipped: 0 });
    expect((await t.sql(`SELECT 1 FROM callbacks WHERE status = 'failed'`)).length).toBe(0);
    await t.http().put('/admin/queues/api/queues/callbacks/promote').set('Authorization', BASIC).expect(200);
    const promoted = await row(delayed);
    expect(promoted.status === 'delivered' || promoted.next_attempt_at!.getTime() <= Date.now()).toBe(true);

    for (const [path, id] of [
      ['/bulk-gone-1', dead[0]],
      ['/bulk-gone-2', dead[1]],
      ['/bulk-later', delayed],
    ]) {
      await until(() => rx.on(path).length === 2, { what: `the second attempt of ${path}`, timeoutMs: 20000 });
      expect(rx.on(path).map((h) => h.headers['webhook-id'])).toEqual([id, id]);
    }
    for (const id of [...failed, delayed]) await settled(id, 'delivered', 'every one delivered');
    expect(rx.on('/never-queued/tok_123?key=k2').map((h) => h.headers['webhook-id'])).toEqual([neverQueuedId]);
    expect(await boardJobs('failed')).toEqual([]);
  });

  it('names the destinations with an open circuit in the queue description', async () => {
    const down = await Receiver.start();
    try {
      down.answer = (_h, _req, res) => res.writeHead(503).end('down');
      const outage = await companyWithCallback(t, p, down.url('/hook'));
      for (let i = 0; i < 3; i++) await outage.change();
      const description = await until(
        async () => {
          const d = (await boardQueue('latest')).description;
          return d.includes('Open circuits') ? d : null;
        },
        { what: 'the open circuit in the description', timeoutMs: 20000 },
      );
      expect(description).toContain(`Open circuits (1): http://127.0.0.1:${down.port} open since`);
      expect(description).toContain('(last error: HTTP 503)');
    } finally {
      await down.close();
    }
  });

  it("in a real browser: an event's failed delivery offers no Retry, a failed callback beside it does", async () => {
    // A partner whose receiver and Operations URL answer 410: its callback fails, and so does the event telling of it.
    const kestrel = await createPartner(t, 'Kestrel Credit');
    await t.as(kestrel.apiKey, 'patch', '/v1/partner', { operationsUrl: rx.url('/ops-gone/events') }).expect(200);
    const callbackId = await (await companyWithCallback(t, kestrel, rx.url('/ops-gone/hook'))).change();
    const eventOf = `SELECT id FROM callbacks
                      WHERE partner_id = $1 AND event_type = 'callbacks.failed' AND status = 'failed'`;
    const failedEvent = async () => (await t.sql<{ id: string }>(eventOf, [kestrel.id]))[0]?.id;
    const eventId = await until(failedEvent, { what: "the event's delivery failed", timeoutMs: 20000 });
    await settled(callbackId, 'failed', 'the callback failed');

    browser ??= await openBrowser({ username: 'admin', password: ADMIN_TOKEN });
    const { page } = browser;
    const card = (id: string) => page.locator('[class*="card-"]', { has: page.locator(`a[href*="/callbacks/${id}"]`) });
    await page.goto(`${base}/admin/queues/queue/callbacks?status=failed`);
    const event = card(eventId);
    await event.getByText(/→ failed: HTTP 410/).waitFor();
    await expect(event.textContent()).resolves.toContain('event callbacks.failed · partner Kestrel Credit');
    expect(await event.locator('[class*="jobActions-"] button:visible').count()).toBe(0);
    const callback = card(callbackId);
    await callback.getByText(/→ failed: HTTP 410/).waitFor();
    const retry = callback.locator('[class*="jobActions-"] button:visible');
    expect(await retry.count()).toBe(1);
    expect(await retry.locator('.lucide-refresh-cw').count()).toBe(1);
  });
});
