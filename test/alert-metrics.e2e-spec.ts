import { Client } from 'pg';
import { OPEN_DESTINATION_SERIES } from '../src/operations/open-destinations-gauge.js';
import { metric } from './support/metrics.js';
import { companyWithCallback, createPartner, harness, TestApp, until } from './support/harness.js';

// The gauges and counter that ops/alerts.yml watches and no other metric shows, against the
// states they stand for. ROLE=api: admission runs, no worker does (so nothing due is sent).

/** An exported gauge or counter's value; one the service does not export fails the test. */
const gauge = async (t: TestApp, name: string): Promise<number> => {
  const value = await metric(t, name);
  if (value === undefined) throw new Error(`${name} is not in /metrics`);
  return value;
};

/** The series of the open-destinations gauge in /metrics, as `partner|partner_id|origin` → seconds. */
async function openSeries(t: TestApp): Promise<Map<string, number>> {
  const text = (await t.http().get('/metrics').expect(200)).text;
  const labels = 'partner="([^"]*)",partner_id="([^"]*)",origin="([^"]*)"';
  const series = new RegExp(`^funding_destination_circuit_open_seconds\\{${labels}\\} (\\S+)$`, 'gm');
  return new Map([...text.matchAll(series)].map((m) => [`${m[1]}|${m[2]}|${m[3]}`, Number(m[4])]));
}

describe('metrics for the alert rules', () => {
  let t: TestApp;

  const e2e = harness({ ROLE: 'api' }, { partner: null });
  beforeAll(() => ({ t } = e2e));

  it('workers alive, admission passes, the longest open circuit, the longest-due callback of a closed destination (as admission sees it)', async () => {
    // No worker process: none alive. Admission leads and completes a pass each second.
    expect(await gauge(t, 'funding_delivery_workers')).toBe(0);
    await until(async () => (await gauge(t, 'funding_admission_passes_total')) >= 2, {
      timeoutMs: 10_000,
      what: 'admission passes counted',
    });
    expect(await gauge(t, 'funding_destination_circuit_open_longest_seconds')).toBe(0);
    expect(await gauge(t, 'funding_callback_oldest_due_seconds')).toBe(0);

    await t.sql(
      `INSERT INTO delivery_workers (id, concurrency, expires_at) VALUES ('alive', 1, now() + interval '1 hour'), ('gone', 1, now() - interval '1 second')`,
    );
    expect(await gauge(t, 'funding_delivery_workers')).toBe(1);
    await t.sql(`DELETE FROM delivery_workers`);

    // Two destinations, one open for an hour; a callback due for ten minutes at the closed one,
    // for two hours at the open one (which waits on purpose, and is not counted).
    const p = await createPartner(t);
    const company = (await t.as(p.apiKey, 'post', '/v1/companies', { name: 'F' }).expect(201)).body.id as string;
    for (const [host, due] of [
      ['closed.example', '10 minutes'],
      ['open.example', '2 hours'],
    ]) {
      await t.sql(
        `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
         VALUES ($1, $2, 0, $3, '{}', 'pending', now() - $4::interval)`,
        [p.id, company, `https://${host}/hook`, due],
      );
    }
    await t.sql(
      `UPDATE destinations SET opened_at = now() - interval '1 hour', next_probe_at = now() + interval '1 hour' WHERE origin = 'https://open.example'`,
    );
    const open = await gauge(t, 'funding_destination_circuit_open_longest_seconds');
    expect(open).toBeGreaterThanOrEqual(3600);
    expect(open).toBeLessThan(3660);
    // The oldest due is what admission's passes saw: two passes after the destination opened.
    const passes = await gauge(t, 'funding_admission_passes_total');
    await until(async () => (await gauge(t, 'funding_admission_passes_total')) >= passes + 2, {
      timeoutMs: 10_000,
      what: 'two more admission passes',
    });
    const due = await gauge(t, 'funding_callback_oldest_due_seconds');
    expect(due).toBeGreaterThanOrEqual(600);
    expect(due).toBeLessThan(660);
  });

  it('how long the callback feed is held back: the age of the oldest transaction holding a transaction id, 0 once it ends', async () => {
    expect(await gauge(t, 'funding_callback_feed_held_seconds')).toBeLessThan(1);
    const session = new Client({ connectionString: t.config.databaseUrl });
    await session.connect();
    try {
      await session.query('BEGIN');
      await session.query('SELECT pg_current_xact_id()'); // it now holds a transaction id, as a write would
      await until(async () => (await gauge(t, 'funding_callback_feed_held_seconds')) >= 1.5, {
        timeoutMs: 10_000,
        what: 'the open transaction aged',
      });
      await session.query('COMMIT');
      await until(async () => (await gauge(t, 'funding_callback_feed_held_seconds')) < 1, {
        timeoutMs: 10_000,
        what: 'the gauge back once it ended',
      });
    } finally {
      await session.end();
    }
  });

  it(`names the ${OPEN_DESTINATION_SERIES} destinations open the longest by partner and origin, no other`, async () => {
    const a = await createPartner(t, 'Longest Open Bank');
    const b = await createPartner(t, 'Brief Outage Ltd');
    // Twelve open destinations (one partner's eleven, the other's one), the ith open for 12 - i hours.
    for (let i = 0; i < 12; i++) {
      await t.sql(
        `INSERT INTO destinations (key, partner_id, origin, opened_at, next_probe_at)
         VALUES ($1::text || ' ' || $2, $1::uuid, $2, now() - $3 * interval '1 hour', now() + interval '1 hour')`,
        [i === 11 ? b.id : a.id, `https://h${i}.example`, 12 - i],
      );
    }
    const longest = await openSeries(t);
    expect(longest.size).toBe(OPEN_DESTINATION_SERIES);
    const names = [...longest.keys()].sort();
    expect(names).toEqual([...Array(10).keys()].map((i) => `Longest Open Bank|${a.id}|https://h${i}.example`).sort());
    expect(longest.get(`Longest Open Bank|${a.id}|https://h0.example`)).toBeGreaterThanOrEqual(12 * 3600);
    // One closes: its series goes, and the next longest takes its place.
    await t.sql(`UPDATE destinations SET opened_at = NULL, next_probe_at = NULL WHERE origin = 'https://h0.example'`);
    const after = await openSeries(t);
    expect(after.size).toBe(OPEN_DESTINATION_SERIES);
    expect(after.has(`Longest Open Bank|${a.id}|https://h0.example`)).toBe(false);
    expect(after.has(`Longest Open Bank|${a.id}|https://h10.example`)).toBe(true);
    await t.sql(`UPDATE destinations SET opened_at = NULL, next_probe_at = NULL`);
    expect((await openSeries(t)).size).toBe(0);
  });
});

describe('a real outage in the alert gauge', () => {
  let t: TestApp;
  let down = true;
  // Two failed attempts in a row open a circuit; the second attempt 100 ms after the first, the
  // next five minutes later; probes every 300 ms at first.
  const e2e = harness(
    { CALLBACK_BREAKER_THRESHOLD: '2', CALLBACK_BREAKER_PROBE: '300ms..600ms', CALLBACK_RETRY_SCHEDULE: '100ms,5m' },
    { partner: null },
  );
  beforeAll(() => {
    ({ t } = e2e);
    e2e.rx.answer = (h, _req, res) => res.writeHead(h.path === '/zeta' && down ? 503 : 204).end();
  });

  it("shows the open destination with its partner's name and origin until it closes, and no healthy one", async () => {
    const zeta = await createPartner(t, 'Zeta Payments');
    const acme = await createPartner(t, 'Acme Bank');
    // The same receiver's origin: one destination per partner, only Zeta's failing.
    const healthy = await companyWithCallback(t, acme, e2e.rx.url('/acme'));
    const failing = await companyWithCallback(t, zeta, e2e.rx.url('/zeta'));
    await healthy.change();
    await failing.change();
    const key = `Zeta Payments|${zeta.id}|http://127.0.0.1:${e2e.rx.port}`;
    const shown = await until(async () => ((await openSeries(t)).has(key) ? openSeries(t) : null), {
      what: "Zeta's open destination in /metrics",
      timeoutMs: 15_000,
    });
    expect([...shown.keys()]).toEqual([key]);
    expect(await healthy.statuses()).toEqual(['delivered']);

    down = false;
    await failing.change(); // a callback due now: the probe that closes the circuit
    const closed = async () => (await openSeries(t)).size === 0;
    await until(closed, { what: 'the series gone once the circuit closed', timeoutMs: 15_000 });
  }, 60_000);
});
