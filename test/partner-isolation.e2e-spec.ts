import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { DestinationView } from '../src/delivery/destinations/destinations.service.js';
import { Receiver } from './support/receiver.js';
import { companyWithCallback, createPartner, harness, Partner, until } from './support/harness.js';

/**
 * Two partners whose receivers share ONE origin (a hosted inbox: same host and port, different
 * paths). Partner 2's receiver answers 5xx, hangs past the timeout, and refuses its test
 * callbacks: its own destination opens. Partner 1's callbacks keep going at once, its destination
 * stays closed in every view, and it hears of nothing (docs/security.md: one partner's receivers
 * cannot delay, fail or report another's).
 */
describe("two partners on one receiver origin: one's failures are its own", () => {
  const e2e = harness({
    CALLBACK_BREAKER_THRESHOLD: '3',
    // Partner 2's circuit stays open for the whole test once it opens: its probe is far off.
    CALLBACK_BREAKER_PROBE: '2m..5m',
    CALLBACK_TIMEOUT_MS: '1000',
    CALLBACK_RETRY_SCHEDULE: '1s,1s,1s,10m',
  });
  let p1: Partner;
  let p2: Partner;
  let ops: Receiver;
  let origin: string;
  const hanging: http.ServerResponse[] = [];

  beforeAll(async () => {
    const { t, rx } = e2e;
    p1 = e2e.p;
    p2 = await createPartner(t, 'Other Bank');
    origin = `http://127.0.0.1:${rx.port}`;
    rx.answer = (hit, _req, res) => {
      if (hit.path.startsWith('/p2/hang')) hanging.push(res);
      else if (hit.path.startsWith('/p2/')) res.writeHead(hit.path.startsWith('/p2/test') ? 503 : 500).end();
      else res.writeHead(204).end();
    };
    // Operational events go to another receiver, one path per partner.
    ops = await Receiver.start();
    await t.as(p1.apiKey, 'patch', '/v1/partner', { operationsUrl: ops.url('/ops/p1') }).expect(200);
    await t.as(p2.apiKey, 'patch', '/v1/partner', { operationsUrl: ops.url('/ops/p2') }).expect(200);
  });
  afterAll(async () => {
    hanging.splice(0).forEach((res) => res.destroy());
    await ops?.close();
  });

  const views = async (query: string) =>
    (await e2e.t.admin('get', `/admin/v1/destinations${query}`).expect(200)).body.items as DestinationView[];

  it("opens partner 2's destination only; partner 1's callbacks go at once, its destination stays closed, and it is told nothing", async () => {
    const { t, rx } = e2e;
    const mine = await companyWithCallback(t, p1, rx.url('/p1/cb?token=a'));
    const failing = await companyWithCallback(t, p2, rx.url('/p2/500'));
    const slow = await companyWithCallback(t, p2, rx.url('/p2/hang'));

    // Partner 2's receiver fails three ways: 500s, a hang past the timeout, refused test callbacks.
    await failing.change();
    await slow.change();
    await t.as(p2.apiKey, 'post', '/v1/callbacks/test', { companyId: failing.c, url: rx.url('/p2/test') }).expect(202);
    for (let i = 0; i < 3; i++) await mine.change();
    const open = await until(async () => (await views(`?partnerId=${p2.id}`)).find((d) => d.state === 'open'), {
      timeoutMs: 20_000,
      what: "partner 2's destination opening",
    });
    expect(open).toMatchObject({ partnerId: p2.id, origin });

    // While it is open, partner 1's callbacks (and its test callback) to the same origin go at once.
    const sentBefore = rx.on('/p1/cb?token=a').length;
    const opened = Date.now();
    for (let i = 0; i < 5; i++) await mine.change();
    const test1 = (
      await t.as(p1.apiKey, 'post', '/v1/callbacks/test', { companyId: mine.c, url: rx.url('/p1/test') }).expect(202)
    ).body;
    expect(test1.status).toBe('pending');
    await until(async () => (await mine.statuses()).every((s) => s === 'delivered') && rx.on('/p1/test').length === 1, {
      timeoutMs: 5000,
      what: "partner 1's callbacks delivered while partner 2's destination is open",
    });
    expect(rx.on('/p1/cb?token=a').length - sentBefore).toBe(5);
    expect(Date.now() - opened).toBeLessThan(5000);
    // Partner 2's test callback now fails at once, naming its destination by origin (never the key).
    const test2 = (
      await t.as(p2.apiKey, 'post', '/v1/callbacks/test', { companyId: failing.c, url: rx.url('/p2/test') }).expect(202)
    ).body;
    expect(test2).toMatchObject({ status: 'failed' });
    expect(test2.lastError).toMatch(new RegExp(`^destination ${origin} circuit open since `));

    // Partner 1's destination is closed in its own view and the operators'.
    const own = (await t.as(p1.apiKey, 'get', '/v1/callbacks/destinations').expect(200)).body
      .items as DestinationView[];
    expect(own).toEqual([
      expect.objectContaining({
        partnerId: p1.id,
        origin,
        state: 'closed',
        consecutiveFailures: 0,
        openedAt: null,
        lastError: null,
      }),
    ]);
    const theirs = (await t.as(p2.apiKey, 'get', '/v1/callbacks/destinations').expect(200)).body
      .items as DestinationView[];
    // (its other destination: its operationsUrl's origin, which took its destination.failing)
    expect(theirs.filter((d) => d.origin === origin)).toEqual([
      expect.objectContaining({ partnerId: p2.id, origin, state: 'open' }),
    ]);
    expect((await views(`?origin=${encodeURIComponent(origin)}`)).map((d) => [d.partnerId, d.state])).toEqual(
      expect.arrayContaining([
        [p1.id, 'closed'],
        [p2.id, 'open'],
      ]),
    );
    expect((await views('?state=open')).map((d) => d.partnerId)).toEqual([p2.id]);
    expect((await views(`?partnerId=${p1.id}&state=closed`)).map((d) => d.origin)).toEqual([origin]);

    // Partner 2 is told its destination is failing, by origin; partner 1 is told nothing.
    const failingEvent = await until(
      () => ops.on('/ops/p2').find((h) => JSON.parse(h.body).type === 'destination.failing'),
      { what: "partner 2's destination.failing" },
    );
    expect(JSON.parse(failingEvent.body).data).toMatchObject({ destination: origin });
    expect((await t.as(p1.apiKey, 'get', '/v1/partner/events').expect(200)).body.items).toEqual([]);
    expect(ops.on('/ops/p1')).toEqual([]);
  });

  it("probes one partner's open destination at an origin, or every partner's there; a closed or unknown one is refused", async () => {
    const { t } = e2e;
    await t.admin('post', '/admin/v1/destinations/probe', { origin, partnerId: p1.id }).expect(409);
    await t.admin('post', '/admin/v1/destinations/probe', { origin, partnerId: randomUUID() }).expect(404);
    await t
      .admin('post', '/admin/v1/destinations/probe', { origin: 'http://127.0.0.1:9', partnerId: p2.id })
      .expect(404);
    await t.admin('post', '/admin/v1/destinations/probe', { origin, partnerId: 'not-a-uuid' }).expect(400);
    // The probe goes within a second (its circuit's own probe is minutes away): one more request to partner 2's paths.
    const p2Hits = () => e2e.rx.hits.filter((h) => h.path.startsWith('/p2/')).length;
    const hitsBefore = p2Hits();
    await t.admin('post', '/admin/v1/destinations/probe', { origin, partnerId: p2.id }).expect(202);
    await until(() => p2Hits() > hitsBefore, { what: "the probe of partner 2's destination" });
    await t.admin('post', '/admin/v1/destinations/probe', { origin }).expect(202);
    const audit = await t.sql<{ target_id: string }>(
      `SELECT target_id FROM audit_entries WHERE action = 'destination.probe'`,
    );
    // Each entry names the destination probed: partner 2's at the origin, never partner 1's.
    expect(audit.map((a) => a.target_id)).toEqual([`${p2.id} ${origin}`, `${p2.id} ${origin}`]);
    // Partner 1's destination was never touched by partner 2's probes.
    expect((await views(`?partnerId=${p1.id}`))[0]).toMatchObject({ state: 'closed', consecutiveFailures: 0 });
  });
});
