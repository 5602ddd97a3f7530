/**
 * Operational events end to end: the real app, a partner's receiver that dies and comes back on
 * one origin, and its operationsUrl on another (docs/partners.md, "Operational events"). Each event arrives signed like a callback, from the published address, its
 * webhook-id the event's id, and is listed for the partner and for operators.
 */
import { Webhook } from 'standardwebhooks';
import { Received, Receiver, webhookHeaders } from './support/receiver.js';
import { companyWithCallback, createPartner, harness, Partner, TestApp, until } from './support/harness.js';

interface Event {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

describe('operational events, delivered to the partner’s operationsUrl', () => {
  let t: TestApp;
  let p: Partner;
  let ops: Receiver;
  let dead: Receiver;
  let failing = true;

  // Three failed attempts open a circuit; probes every 300 ms; retries 100 ms apart, the last a minute on.
  const e2e = harness({
    CALLBACK_BREAKER_THRESHOLD: '3',
    CALLBACK_BREAKER_PROBE: '300ms..600ms',
    CALLBACK_RETRY_SCHEDULE: '100ms,100ms,100ms,100ms,1m',
  });
  beforeAll(async () => {
    ({ t, p, rx: ops } = e2e);
    dead = await Receiver.start();
    dead.answer = (h, _req, res) => res.writeHead(h.path === '/gone' ? 410 : failing ? 503 : 204).end();
    await t.as(p.apiKey, 'patch', '/v1/partner', { operationsUrl: ops.url('/ops') }).expect(200);
  });
  afterAll(() => dead?.close());

  /** The events the operations receiver verified (Standard Webhooks, the partner's secret), in arrival order. */
  const verified = () =>
    ops.on('/ops').map((h: Received) => {
      const body = new Webhook(p.signingSecret).verify(h.body, webhookHeaders(h.headers)) as Event;
      return { id: h.headers['webhook-id'] as string, from: h.remoteAddress, raw: h.body, ...body };
    });
  const eventOf = (type: string) =>
    until(() => verified().find((e) => e.type === type), { what: type, timeoutMs: 15_000 });
  const origin = () => `http://127.0.0.1:${dead.port}`;

  it('tells destination.failing when the circuit opens and destination.recovered when it closes, signed, and lists them', async () => {
    const company = await companyWithCallback(t, p, dead.url('/cb'));
    await company.change(); // one callback: its third failed attempt opens the circuit, and it waits

    const opened = await eventOf('destination.failing');
    expect(opened.from).toBe('127.0.0.1');
    expect(Object.keys(opened).slice(3)).toEqual(['type', 'timestamp', 'data']);
    // Compact JSON, byte for byte JSON.stringify's, keys in the documented order (the signature covers these bytes).
    expect(opened.raw).toBe(JSON.stringify(JSON.parse(opened.raw)));
    expect(Object.keys(opened.data)).toEqual(['destination', 'since', 'lastError', 'waiting']);
    expect(opened.data).toEqual({
      destination: origin(),
      since: expect.any(String),
      lastError: 'HTTP 503',
      waiting: 1,
    });
    expect(Date.parse(opened.timestamp)).toBeGreaterThanOrEqual(Date.parse(opened.data.since as string));

    failing = false;
    const recovered = await eventOf('destination.recovered');
    expect(recovered.data).toEqual({
      destination: origin(),
      failingSince: opened.data.since,
      recoveredAt: expect.any(String),
      waiting: expect.any(Number),
    });
    expect(recovered.raw).toBe(JSON.stringify(JSON.parse(recovered.raw)));
    expect(Object.keys(recovered.data)).toEqual(['destination', 'failingSince', 'recoveredAt', 'waiting']);
    await until(async () => (await company.statuses()).every((s) => s === 'delivered'), {
      what: 'the waiting callbacks delivered after recovery',
    });

    const listed = await until(
      async () => {
        const { body } = await t.as(p.apiKey, 'get', '/v1/partner/events').expect(200);
        return body.items.length === 2 && body.items.every((e: { status: string }) => e.status === 'delivered')
          ? body
          : null;
      },
      { what: 'both events listed as delivered' },
    );
    expect(listed.items.map((e: Event & { id: string }) => [e.type, e.id])).toEqual([
      ['destination.recovered', recovered.id],
      ['destination.failing', opened.id],
    ]);
    expect(listed.items[1]).toMatchObject({
      timestamp: opened.timestamp,
      data: opened.data,
      attemptCount: 1,
      lastError: null,
    });
    const admin = (await t.admin('get', `/admin/v1/partners/${p.id}/events?type=destination.failing`).expect(200)).body;
    expect(admin.items.map((e: { id: string }) => e.id)).toEqual([opened.id]);
  }, 60_000);

  it("reads and repairs an event as an event: its delivery is no callback to read or to redeliver, on the partner's routes and the operators' alike (404)", async () => {
    const { items } = (await t.as(p.apiKey, 'get', '/v1/partner/events').expect(200)).body as {
      items: { id: string; status: string }[];
    };
    expect(items.length).toBeGreaterThan(0);
    const before = await t.sql(
      'SELECT status, next_attempt_at, schedule_started_at FROM callbacks WHERE id = ANY($1::uuid[]) ORDER BY id',
      [items.map((e) => e.id)],
    );
    for (const { id } of items) {
      for (const ask of [
        () => t.as(p.apiKey, 'get', `/v1/callbacks/${id}`),
        () => t.as(p.apiKey, 'post', `/v1/callbacks/${id}/redeliver`),
        () => t.admin('get', `/admin/v1/callbacks/${id}`),
        () => t.admin('post', `/admin/v1/callbacks/${id}/redeliver`),
      ]) {
        expect((await ask().expect(404)).body).toMatchObject({ code: 'not_found' });
      }
    }
    expect(
      await t.sql(
        'SELECT status, next_attempt_at, schedule_started_at FROM callbacks WHERE id = ANY($1::uuid[]) ORDER BY id',
        [items.map((e) => e.id)],
      ),
    ).toEqual(before);
  });

  it('tells callbacks.failed at once for a callback that failed for good, counting it', async () => {
    const company = await companyWithCallback(t, p, dead.url('/gone'));
    await company.change();
    const told = await eventOf('callbacks.failed');
    expect(told.data).toEqual({ destination: origin(), count: 1, from: expect.any(String), to: expect.any(String) });
    expect(told.raw).toBe(JSON.stringify(JSON.parse(told.raw)));
    expect(Object.keys(told.data)).toEqual(['destination', 'count', 'from', 'to']);
    expect(await company.statuses()).toEqual(['failed']);
  }, 30_000);

  it('records and lists, but sends nothing, for a partner without an operationsUrl', async () => {
    const other = await createPartner(t, 'Quiet Bank');
    const before = ops.hits.length;
    const company = await companyWithCallback(t, other, dead.url('/gone'));
    await company.change();
    const listed = await until(
      async () => (await t.as(other.apiKey, 'get', '/v1/partner/events').expect(200)).body.items[0],
      { what: 'the event listed' },
    );
    expect(listed).toMatchObject({
      type: 'callbacks.failed',
      data: { destination: origin(), count: 1 },
      status: 'not_sent',
      attemptCount: 0,
      deliveredAt: null,
    });
    expect((await t.sql(`SELECT id FROM callbacks WHERE id = $1`, [listed.id])).length).toBe(0);
    expect(ops.hits.length).toBe(before);
    // Each partner sees its own events only.
    expect(
      (await t.as(p.apiKey, 'get', '/v1/partner/events').expect(200)).body.items.map((e: { id: string }) => e.id),
    ).not.toContain(listed.id);
  });
});
