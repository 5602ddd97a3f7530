import { Receiver } from './support/receiver.js';
import { ADMIN_TOKEN, companyWithCallback, createPartner, harness, TestApp, until } from './support/harness.js';

const BASIC = `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`;

interface BoardJob {
  id: string;
  name: string;
  failedReason: string;
  /** bull-board's page offers Retry on a job exactly when it is failed by this. */
  isFailed: boolean;
}

/**
 * Whose each dashboard job is: a callback names its partner, and an operational event's delivery
 * (a row with an event type, no message and no company) shows as that event, with its partner and
 * the origin of the partner's Operations URL, never its path or query. Through bull-board's API
 * (test/dashboard.e2e-spec.ts drives the page itself in Chromium).
 */
describe("the queue dashboard names each job's partner, and shows operational events as events", () => {
  let t: TestApp;
  let rx: Receiver;
  let down: Receiver;

  const board = async (status: string): Promise<BoardJob[]> => {
    const path = `/admin/queues/api/queues?activeQueue=callbacks&status=${status}&page=1&jobsPerPage=50`;
    return (await t.http().get(path).set('Authorization', BASIC).expect(200)).body.queues[0].jobs;
  };
  const logs = async (id: string) =>
    (await t.http().get(`/admin/queues/api/queues/callbacks/${id}/logs`).set('Authorization', BASIC).expect(200)).body;

  // Three failures in a row open a circuit; a failed callback retries an hour later.
  const e2e = harness({ CALLBACK_RETRY_SCHEDULE: '1h', CALLBACK_BREAKER_THRESHOLD: '3' }, { partner: null });
  beforeAll(async () => {
    ({ t, rx } = e2e);
    // The partners' Operations URL answers 410: an event's delivery fails at once, a dead letter.
    rx.answer = (h, _req, res) => res.writeHead(h.path.startsWith('/ops/') ? 410 : 204).end();
    down = await Receiver.start();
    down.answer = (_h, _req, res) => res.writeHead(503).end('down');
  });
  afterAll(() => down?.close());

  it("shows an operational event's failed delivery as the event: type, partner, Operations URL origin", async () => {
    const nordlicht = await createPartner(t, 'Nordlicht Kredit');
    await t.as(nordlicht.apiKey, 'patch', '/v1/partner', { operationsUrl: rx.url('/ops/tok_7?key=k3') }).expect(200);
    const outage = await companyWithCallback(t, nordlicht, down.url('/hook'));
    for (let i = 0; i < 3; i++) await outage.change();
    const failedEvent = async () => {
      const sql = `SELECT id FROM callbacks
                    WHERE event_type = 'destination.failing' AND partner_id = $1 AND status = 'failed'`;
      return (await t.sql<{ id: string }>(sql, [nordlicht.id]))[0];
    };
    const event = await until(failedEvent, { what: 'the event delivery failed', timeoutMs: 20000 });

    const job = (await board('failed')).find((j) => j.id === event.id)!;
    expect(job.name).toBe(`event destination.failing · partner Nordlicht Kredit · operations URL ${rx.url('')}`);
    // Its error is in its log: no failed reason, so bull-board offers no Retry on it (an event is not redelivered).
    expect(job).toMatchObject({ failedReason: '', isFailed: false });
    expect(`${job.name} ${job.failedReason}`).not.toMatch(/null|Unknown|company|tok_7|key=/);
    const [a] = await t.sql<{ started_at: Date; duration_ms: number }>(
      'SELECT started_at, duration_ms FROM callback_attempts WHERE callback_id = $1',
      [event.id],
    );
    const attempt = `attempt 1 at ${a.started_at.toISOString()}: HTTP 410 in ${a.duration_ms} ms from 127.0.0.1`;
    expect(await logs(event.id)).toEqual([`${attempt} → failed: HTTP 410`]);

    // Its callbacks, waiting behind the open circuit, name the partner too.
    const held: BoardJob[] = [];
    for (const tab of ['waiting', 'delayed', 'active']) {
      held.push(...(await board(tab)).filter((j) => j.name.endsWith(down.url(''))));
    }
    expect(held.length).toBe(3);
    const named = `0 CreditLimitUpdated · partner Nordlicht Kredit · company ${outage.c} · ${down.url('')}`;
    for (const j of held) expect(j.name).toBe(named);
  });

  const SWITCHED_OFF_FOR_EVENTS =
    "switches Retry off on an event's failed delivery (no button, 405 saying why, nothing changed), " +
    'keeps it for callbacks; Retry all replays callbacks only';
  it(SWITCHED_OFF_FOR_EVENTS, async () => {
    const partner = await createPartner(t, 'Kestrel Credit');
    await t.as(partner.apiKey, 'patch', '/v1/partner', { operationsUrl: rx.url('/ops/events') }).expect(200);
    // Its receiver answers 410: the callback fails at once, and so does the callbacks.failed event telling of it.
    const gone = await companyWithCallback(t, partner, rx.url('/ops/gone'));
    const callback = await gone.change();
    type Failed = { id: string; eventType: string | null; scheduleStartedAt: Date; attemptCount: number };
    const failed = async (attempts: number) => {
      const sql = `SELECT id, event_type AS "eventType", schedule_started_at AS "scheduleStartedAt",
                          attempt_count AS "attemptCount"
                     FROM callbacks WHERE partner_id = $1 AND status = 'failed' AND attempt_count = $2`;
      const rows = await t.sql<Failed>(sql, [partner.id, attempts]);
      return rows.length === 2 ? rows : null;
    };
    const what = 'the callback and its callbacks.failed event failed';
    const rows = await until(() => failed(1), { what, timeoutMs: 20000 });
    const event = rows.find((r) => r.eventType === 'callbacks.failed')!;
    const jobs = await board('failed');
    expect(jobs.find((j) => j.id === event.id)).toMatchObject({ failedReason: '', isFailed: false });
    expect(jobs.find((j) => j.id === callback)).toMatchObject({ failedReason: 'HTTP 410', isFailed: true });

    const audited = async (id: string) =>
      (await t.sql('SELECT 1 FROM audit_entries WHERE target_id = $1', [id])).length;
    const put = (path: string) =>
      t.http().put(`/admin/queues/api/queues/callbacks/${path}`).set('Authorization', BASIC);
    const retry = (id: string) => put(`${id}/retry`);
    const refused = await retry(event.id).expect(405);
    const why = expect.stringContaining('operational event is not redelivered');
    expect(refused.body).toMatchObject({ code: 'method_not_allowed', message: why });
    expect(refused.body.message).toContain('GET /admin/v1/partners/{partnerId}/events');
    const now = async (id: string) =>
      (
        await t.sql<Omit<Failed, 'id' | 'eventType'> & { status: string }>(
          `SELECT status, schedule_started_at AS "scheduleStartedAt", attempt_count AS "attemptCount"
           FROM callbacks WHERE id = $1`,
          [id],
        )
      )[0];
    const { scheduleStartedAt, attemptCount } = event;
    const unchanged = { status: 'failed', scheduleStartedAt, attemptCount };
    expect(await now(event.id)).toEqual(unchanged);
    expect(await audited(event.id)).toBe(0);

    // A failed callback's Retry still redelivers it (sent again: 410 again, failed after a second attempt).
    await retry(callback).expect(204);
    expect(await audited(callback)).toBe(1);
    const again = async () => (await now(callback)).status === 'failed' && (await now(callback)).attemptCount === 2;
    await until(again, { what: 'the callback redelivered and failed again', timeoutMs: 20000 });

    // Retry all: every failed callback (of every partner) again, never an event's delivery.
    const failedCallbacks = `SELECT count(*)::int AS n FROM callbacks WHERE status = 'failed' AND event_type IS NULL`;
    const [{ n }] = await t.sql<{ n: number }>(failedCallbacks);
    const all = await put('retry/failed').expect(200);
    expect(all.body.retried).toBe(n);
    expect(await now(event.id)).toEqual(unchanged);
  });

  it('names two partners sharing a receiver apart, each job by its own partner', async () => {
    const acme = await createPartner(t, 'Acme Bank');
    const zeta = await createPartner(t, 'Zeta Payments');
    const ids: Record<string, string> = {};
    for (const [name, p] of [
      ['Acme Bank', acme],
      ['Zeta Payments', zeta],
    ] as const) {
      ids[name] = await (await companyWithCallback(t, p, rx.url('/shared'))).change();
    }
    const delivered = async () => {
      const jobs = (await board('completed')).filter((j) => Object.values(ids).includes(j.id));
      return jobs.length === 2 ? jobs : null;
    };
    const jobs = await until(delivered, { what: 'both delivered', timeoutMs: 20000 });
    for (const [name, id] of Object.entries(ids)) {
      expect(jobs.find((j) => j.id === id)!.name).toContain(` · partner ${name} · company `);
    }
  });
});
