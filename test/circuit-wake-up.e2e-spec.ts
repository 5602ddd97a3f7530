/**
 * Nothing waits on a probe that never comes (docs/partners.md, "Retries, outages and
 * `Retry-After`"; docs/architecture.md, invariant 9): a destination whose circuit opened and whose
 * callbacks then ran out of schedule has nothing waiting, so no automatic probe would be sent for
 * its 10 minutes. A redelivery (the partner's, an operator's, the portal's Redeliver) goes at once
 * as its probe, one at a time however many are asked for; an operator's probe makes it half-open,
 * so its next fresh callback is the probe. Every view shows when a held callback's next attempt
 * really is.
 */
import type { DestinationView } from '../src/delivery/destinations/destinations.service.js';
import { timeLabel } from '../src/portal/portal-format.js';
import { Receiver } from './support/receiver.js';
import { ADMIN_TOKEN, companyWithCallback, harness, Partner, TestApp, until } from './support/harness.js';

type Company = Awaited<ReturnType<typeof companyWithCallback>>;

describe('a circuit open with nothing waiting', () => {
  let t: TestApp;
  let p: Partner;
  const receivers: Receiver[] = [];

  // One failure opens a circuit; its probe is ten minutes away; a callback's schedule ends 2 s after it starts
  // (long next to a request here: a redelivery waiting its turn behind a probe in flight is not failed meanwhile).
  const e2e = harness({
    CALLBACK_BREAKER_THRESHOLD: '1',
    CALLBACK_BREAKER_PROBE: '10m..10m',
    CALLBACK_RETRY_SCHEDULE: '2s',
  });
  beforeAll(() => ({ t, p } = e2e));
  // Whether a callback's destination was still open when the statement that delivered it ended
  // (an AFTER trigger sees the whole statement's writes): a probe's delivery closes the circuit in
  // the same statement, so no reader sees the probe delivered and its circuit still open.
  beforeAll(async () => {
    await t.sql(`CREATE TABLE delivered_with_circuit (callback_id uuid PRIMARY KEY, still_open boolean NOT NULL)`);
    await t.sql(`CREATE FUNCTION note_delivered_with_circuit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO delivered_with_circuit SELECT NEW.id, d.opened_at IS NOT NULL FROM destinations d WHERE d.key = NEW.destination;
        RETURN NULL;
      END $$`);
    await t.sql(`CREATE TRIGGER note_delivered_with_circuit AFTER UPDATE OF status ON callbacks FOR EACH ROW
      WHEN (NEW.status = 'delivered' AND OLD.status <> 'delivered') EXECUTE FUNCTION note_delivered_with_circuit()`);
  });
  afterAll(async () => {
    for (const r of receivers) await r.close();
  });

  const origin = (rx: Receiver) => `http://127.0.0.1:${rx.port}`;
  const destination = async (rx: Receiver) =>
    ((await t.as(p.apiKey, 'get', '/v1/callbacks/destinations').expect(200)).body.items as DestinationView[]).find(
      (d) => d.origin === origin(rx),
    )!;
  const statusOf = async (id: string) =>
    (await t.sql<{ status: string }>('SELECT status FROM callbacks WHERE id = $1', [id]))[0].status;

  /** Waits for the callback to be delivered as its destination's probe, which closed the circuit in the same statement. */
  async function deliveredAsProbe(id: string, what: string): Promise<void> {
    await until(async () => (await statusOf(id)) === 'delivered', { what, timeoutMs: 5000 });
    const sql = 'SELECT still_open AS "stillOpen" FROM delivered_with_circuit WHERE callback_id = $1';
    expect(await t.sql<{ stillOpen: boolean }>(sql, [id])).toEqual([{ stillOpen: false }]);
  }

  /** A receiver that answers 500 until `up`, counting the requests it holds at once; a company sending to it. */
  async function failingReceiver(delayMs = 0) {
    const rx = await Receiver.start();
    receivers.push(rx);
    const state = { up: false, open: 0, most: 0 };
    rx.answer = (_h, _req, res) => {
      state.most = Math.max(state.most, ++state.open);
      setTimeout(() => {
        state.open--;
        res.writeHead(state.up ? 204 : 500).end();
      }, delayMs);
    };
    return { rx, state, company: await companyWithCallback(t, p, rx.url('/hook')) };
  }

  /** Its circuit opened by a first callback, then every callback failed at the end of its schedule: nothing waits. */
  async function openWithNothingWaiting(rx: Receiver, company: Company, callbacks = 1): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < callbacks; i++) ids.push(await company.change());
    await until(async () => (await Promise.all(ids.map(statusOf))).every((s) => s === 'failed'), {
      what: 'every callback failed',
      timeoutMs: 10_000,
    });
    const d = await destination(rx);
    expect(d).toMatchObject({ state: 'open', waiting: 0, inFlight: 0 });
    expect(Date.parse(d.nextProbeAt!)).toBeGreaterThan(Date.now() + 8 * 60_000);
    return ids;
  }

  it("shows a held callback's next attempt as its destination's next probe (API, portal, dashboard), and a probe due with nothing waiting as half-open, never a time already past", async () => {
    const { rx, company } = await failingReceiver();
    await openWithNothingWaiting(rx, company);
    const held = await company.change();
    // Its schedule held off while it is looked at (2 s might end it first).
    await t.sql(`UPDATE callbacks SET schedule_started_at = now() + interval '1 hour' WHERE id = $1`, [held]);
    const { nextProbeAt } = await destination(rx);
    for (const get of [
      () => t.as(p.apiKey, 'get', `/v1/callbacks/${held}`),
      () => t.admin('get', `/admin/v1/callbacks/${held}`),
    ]) {
      expect((await get().expect(200)).body).toMatchObject({ status: 'pending', nextAttemptAt: nextProbeAt });
    }
    const listed = (await t.as(p.apiKey, 'get', `/v1/callbacks?companyId=${company.c}&status=pending`).expect(200)).body
      .items;
    expect(listed).toEqual([expect.objectContaining({ id: held, nextAttemptAt: nextProbeAt })]);
    const cookie = await portalSession();
    const page = (await t.http().get(`/portal/callbacks/${held}`).set('Cookie', cookie).expect(200)).text;
    expect(page).toContain(`<dt>Next attempt</dt><dd>${timeLabel(nextProbeAt)}</dd>`);
    // The queue dashboard says why the job waits, and until when.
    const log = (
      await t
        .http()
        .get(`/admin/queues/api/queues/callbacks/${held}/logs`)
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
        .expect(200)
    ).body as string[];
    const { openedAt } = await destination(rx);
    expect(log.at(-1)).toMatch(/, no attempt since → /);
    expect(log.at(-1)!.split(' → ')[1]).toBe(`waiting: circuit open since ${openedAt}, next probe at ${nextProbeAt}`);
    await t.sql(`UPDATE callbacks SET schedule_started_at = now() - interval '1 hour' WHERE id = $1`, [held]);
    await until(async () => (await statusOf(held)) === 'failed', {
      what: 'the held one failed at the end of its schedule',
      timeoutMs: 8000,
    });

    // Its probe time passes with nothing waiting: half-open, its next probe now, not in the past.
    await t.sql(
      `UPDATE destinations SET next_probe_at = now() - interval '1 minute', version = version + 1 WHERE origin = $1`,
      [origin(rx)],
    );
    const asked = Date.now();
    const d = await destination(rx);
    expect(d.state).toBe('half_open');
    expect(Date.parse(d.nextProbeAt!)).toBeGreaterThanOrEqual(asked - 1000);
    const admin = (await t.admin('get', `/admin/v1/destinations?origin=${encodeURIComponent(origin(rx))}`).expect(200))
      .body.items as DestinationView[];
    expect(admin).toEqual([expect.objectContaining({ state: 'half_open', nextProbeAt: expect.any(String) })]);
    expect(
      (await t.admin('get', '/admin/v1/destinations?state=half_open').expect(200)).body.items.map(
        (x: DestinationView) => x.origin,
      ),
    ).toContain(origin(rx));
    const overview = (await t.http().get('/portal').set('Cookie', cookie).expect(200)).text;
    // Whitespace between two tags is the template's layout, not the page's.
    expect(overview.replace(/>\s+</g, '><')).toContain(
      `<th scope="row" class="url origin">${origin(rx)}</th><td><span class="state state-half_open">half_open</span>`,
    );
    expect(overview).toContain('goes now as the probe');
  });

  it('sends a single redelivery by the partner at once as the probe: delivered within seconds, and the circuit closes', async () => {
    const { rx, state, company } = await failingReceiver();
    const [id] = await openWithNothingWaiting(rx, company);
    state.up = true;
    await t.as(p.apiKey, 'post', `/v1/callbacks/${id}/redeliver`).expect(202);
    await deliveredAsProbe(id, 'delivered as the probe');
    expect(await destination(rx)).toMatchObject({ state: 'closed', openedAt: null, nextProbeAt: null, waiting: 0 });
    expect(rx.hits.filter((h) => h.headers['webhook-id'] === id)).toHaveLength(2);
  });

  it('sends a single redelivery by an operator at once as the probe: delivered within seconds, and the circuit closes', async () => {
    const { rx, state, company } = await failingReceiver();
    const [id] = await openWithNothingWaiting(rx, company);
    state.up = true;
    await t.admin('post', `/admin/v1/callbacks/${id}/redeliver`).expect(202);
    await deliveredAsProbe(id, 'delivered as the probe');
    expect((await destination(rx)).state).toBe('closed');
  });

  it("sends the portal's Redeliver at once as the probe: delivered within seconds, and the circuit closes", async () => {
    const { rx, state, company } = await failingReceiver();
    const [id] = await openWithNothingWaiting(rx, company);
    const cookie = await portalSession();
    const page = (await t.http().get(`/portal/callbacks/${id}`).set('Cookie', cookie).expect(200)).text;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1];
    state.up = true;
    const done = await t
      .http()
      .post(`/portal/callbacks/${id}/redeliver`)
      .set('Cookie', cookie)
      .type('form')
      .send({ _csrf: csrf })
      .expect(303);
    expect(done.headers.location).toBe(`/portal/callbacks/${id}?done=redelivered`);
    await deliveredAsProbe(id, 'delivered as the probe');
    expect((await destination(rx)).state).toBe('closed');
  });

  it('takes three redeliveries while the receiver is still down as three 202s, and never sends a burst: one probe at a time, the next as soon as it fails', async () => {
    const { rx, state, company } = await failingReceiver(300);
    const ids = await openWithNothingWaiting(rx, company, 3);
    // Counted from here: before the circuit opened, its window let two go at once.
    const before = rx.hits.length;
    state.most = 0;
    await t.as(p.apiKey, 'post', `/v1/callbacks/${ids[0]}/redeliver`).expect(202);
    await until(() => state.open === 1, { what: 'the first probe in flight' });
    // Two more while it is in flight: they wait their turn, the last asked for goes next.
    await t.as(p.apiKey, 'post', `/v1/callbacks/${ids[1]}/redeliver`).expect(202);
    await t.admin('post', `/admin/v1/callbacks/${ids[2]}/redeliver`).expect(202);
    await until(() => rx.hits.slice(before).some((h) => h.headers['webhook-id'] === ids[2]), {
      what: 'the next probe as soon as the first failed',
      timeoutMs: 5000,
    });
    await until(
      async () => {
        const d = await destination(rx);
        return d.inFlight === 0 && d.state === 'open' && state.open === 0;
      },
      { what: 'no probe left to send' },
    );
    expect(state.most).toBe(1);
    // No more requests than redeliveries (no automatic probe is due for ten minutes).
    expect(rx.hits.length - before).toBeGreaterThanOrEqual(2);
    expect(rx.hits.length - before).toBeLessThanOrEqual(3);
    expect((await destination(rx)).consecutiveFailures).toBe(1 + rx.hits.length - before);
  });

  it("brings an operator's probe forward on a destination with nothing waiting: named in its answer, half-open, and the next fresh callback is delivered within seconds", async () => {
    const { rx, state, company } = await failingReceiver();
    await openWithNothingWaiting(rx, company);
    const asked = Date.now();
    const { items } = (await t.admin('post', '/admin/v1/destinations/probe', { origin: origin(rx) }).expect(202))
      .body as { items: DestinationView[] };
    expect(items).toEqual([
      expect.objectContaining({ partnerId: p.id, origin: origin(rx), state: 'half_open', waiting: 0, inFlight: 0 }),
    ]);
    expect(Date.parse(items[0].nextProbeAt!)).toBeGreaterThanOrEqual(asked - 1000);
    state.up = true;
    const fresh = await company.change();
    await deliveredAsProbe(fresh, 'the fresh callback delivered as the probe');
    expect((await destination(rx)).state).toBe('closed');
  });

  /**
   * A portal session of the partner, by its link: a GET that signs in (303 with the cookie), or a
   * page whose form signs in when posted from the portal's own origin.
   */
  async function portalSession(): Promise<string> {
    const url = new URL((await t.as(p.apiKey, 'post', '/v1/partner/portal-links', {}).expect(201)).body.url as string);
    const followed = await t.http().get(url.pathname + url.search);
    if (followed.status === 303) return String(followed.headers['set-cookie']).split(';')[0];
    const form = /<form[^>]*method="post"[^>]*action="([^"]+)"/i.exec(followed.text)!;
    const fields = Object.fromEntries(
      [...followed.text.matchAll(/<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"/gi)].map((m) => [
        m[1],
        m[2],
      ]),
    );
    const signedIn = await t
      .http()
      .post(form[1])
      .set('Origin', new URL(t.config.portalBaseUrl).origin)
      .set('Sec-Fetch-Site', 'same-origin')
      .type('form')
      .send(fields)
      .expect(303);
    return String(signedIn.headers['set-cookie']).split(';')[0];
  }
});
