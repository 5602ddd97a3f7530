import type { ServerResponse } from 'node:http';
import { CallbackRelay } from '../src/delivery/callback-relay.js';
import { DestinationParking } from '../src/delivery/destination-parking.js';
import { Receiver } from './support/receiver.js';
import { companyWithCallback, createPartner, failureOnRecord, Partner, startTestApp, TestApp, until } from './support/test-app.js';

/** How the relay learns of new rows, with its 5-second sweep stopped so only the wake-ups count. */
describe('relay wake-ups', () => {
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;

  beforeAll(async () => {
    rx = await Receiver.start();
    t = await startTestApp();
    p = await createPartner(t);
    t.app.get(CallbackRelay)['timers'].forEach(clearInterval);
  });
  afterAll(async () => {
    await t?.close();
    await rx?.close();
  });

  it('relays the callbacks of a change right after its commit', async () => {
    const { change, statuses } = await companyWithCallback(t, p, rx.url('/commit'));
    for (let i = 0; i < 3; i++) await change();
    await until(async () => (await statuses()).every((s) => s === 'delivered'), { what: 'delivered without a sweep' });
    expect(rx.on('/commit')).toHaveLength(3);
  });

  it('relays rows written outside the domain on NOTIFY funding_callbacks', async () => {
    const { c } = await companyWithCallback(t, p, rx.url('/unused'));
    const [row] = await t.sql<{ id: string }>(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
       VALUES ($1, $2, 0, $3, '{}', 'pending', now()) RETURNING id`,
      [p.id, c, rx.url('/notified')],
    );
    await t.sql(`SELECT pg_notify('funding_callbacks', '')`);
    await until(() => rx.on('/notified').length === 1, { what: 'delivered on NOTIFY' });
    expect(rx.on('/notified')[0].headers['webhook-id']).toBe(row.id);
  });
});

/**
 * A relay pass claims rows in seq order, 1000 at a time. The rows of a batch whose destination
 * has no room are parked while the pass goes on to its next batch: a fresh callback behind a
 * full destination's backlog does not also wait for that backlog's parking.
 */
describe("a relay pass does not wait for a full destination's parking", () => {
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;
  let full: Receiver;

  beforeAll(async () => {
    [rx, full] = await Promise.all([Receiver.start(), Receiver.start()]);
    t = await startTestApp({ CALLBACK_DESTINATION_CONCURRENCY: '2' });
    p = await createPartner(t);
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => {
    await t?.close();
    await rx?.close();
    await full?.close();
  });

  it("delivers a fresh callback queued behind a 1000-row batch while that batch's rows are still being parked", async () => {
    const parking = t.app.get(DestinationParking);
    const park = parking.park.bind(parking);
    let parkedFirst: number | null = null;
    let freshBeforeParked = false;
    // The first parking (the full destination's batch) goes on only once the fresh callback has
    // arrived, or after 15 s: a pass that waited for it would deliver nothing before then.
    jest.spyOn(parking, 'park').mockImplementationOnce(async (rows) => {
      await until(() => rx.on('/fresh').length === 1, { what: 'the fresh callback', timeoutMs: 15000 }).catch(() => undefined);
      freshBeforeParked = rx.on('/fresh').length === 1;
      parkedFirst = rows.length;
      return park(rows);
    });
    const { c } = await companyWithCallback(t, p, rx.url('/unused'));
    // A failure on record: its fresh callbacks ask for slots (a new one's first 2,000 would not).
    await failureOnRecord(t, full.url('/'));
    await t.sql(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
       SELECT $1, $2, 0, $3 || g, '{}', 'pending', now() FROM generate_series(1, 1000) g`,
      [p.id, c, full.url('/backlog/')],
    );
    await t.sql(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
       VALUES ($1, $2, 0, $3, '{}', 'pending', now())`,
      [p.id, c, rx.url('/fresh')],
    );
    await t.sql(`SELECT pg_notify('funding_callbacks', '')`);

    await until(() => rx.on('/fresh').length === 1, { what: 'the fresh callback, before the backlog is parked', timeoutMs: 10000 });
    // Then the backlog: its first two went with the destination's two slots, the rest parked and
    // resumed; every one delivered once.
    await until(() => parkedFirst !== null, { what: 'the backlog parked' });
    expect(freshBeforeParked).toBe(true);
    expect(parkedFirst).toBe(998);
    await until(async () => (await t.sql<{ n: string }>(`SELECT count(*) AS n FROM callbacks WHERE status = 'delivered' AND url LIKE '%/backlog/%'`))[0].n === '1000', {
      what: 'the whole backlog delivered',
      timeoutMs: 60000,
    });
    expect(new Set(full.hits.map((h) => h.headers['webhook-id'])).size).toBe(1000);
    expect(full.hits).toHaveLength(1000);
  });

  it("keeps at most two of a pass's parkings under way, however long the full destination's backlog", async () => {
    const parking = t.app.get(DestinationParking);
    const park = parking.park.bind(parking);
    let active = 0;
    let most = 0;
    let parked = 0;
    // Each parking holds on until three are under way or 500 ms have passed: a pass that did not
    // wait would have a third one going within milliseconds.
    jest.spyOn(parking, 'park').mockImplementation(async (rows) => {
      if (rows.length === 0) return park(rows);
      active++;
      most = Math.max(most, active);
      await until(() => active >= 3, { what: 'a third parking', timeoutMs: 500 }).catch(() => undefined);
      await park(rows);
      active--;
      parked += rows.length;
    });
    // A destination with a failure on record, whose two slots stay taken (it never answers): all
    // of its 4000 callbacks but two are parked, 1000 per batch.
    const hanging: ServerResponse[] = [];
    const silent = await Receiver.start();
    silent.answer = (_h, _req, res) => void hanging.push(res);
    try {
      const { c } = await companyWithCallback(t, p, rx.url('/unused-2'));
      await failureOnRecord(t, silent.url('/'));
      await t.sql(
        `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
         SELECT $1, $2, 0, $3 || g, '{}', 'pending', now() FROM generate_series(1, 4000) g`,
        [p.id, c, silent.url('/long/')],
      );
      await t.sql(`SELECT pg_notify('funding_callbacks', '')`);
      await until(() => parked === 3998, { what: 'the four batches parked', timeoutMs: 20000 });
      expect(most).toBe(2);
    } finally {
      hanging.forEach((res) => res.destroy());
      await silent.close();
    }
  });
});
