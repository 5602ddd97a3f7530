import { Client } from 'pg';
import { metric } from './support/metrics.js';
import { createPartner, harness, TestApp, until } from './support/harness.js';

// The gauges and counter that ops/alerts.yml watches and no other metric shows, against the
// states they stand for. ROLE=api: admission runs, no worker does (so nothing due is sent).


/** An exported gauge or counter's value; one the service does not export fails the test. */
const gauge = async (t: TestApp, name: string): Promise<number> => {
  const value = await metric(t, name);
  if (value === undefined) throw new Error(`${name} is not in /metrics`);
  return value;
};

describe('metrics for the alert rules', () => {
  let t: TestApp;

  const e2e = harness({ ROLE: 'api' }, { partner: null });
  beforeAll(() => ({ t } = e2e));

  it('workers alive, admission passes, the longest open circuit, the longest-due callback of a closed destination (as admission sees it)', async () => {
    // No worker process: none alive. Admission leads and completes a pass each second.
    expect(await gauge(t, 'funding_delivery_workers')).toBe(0);
    await until(async () => (await gauge(t, 'funding_admission_passes_total')) >= 2, { timeoutMs: 10_000, what: 'admission passes counted' });
    expect(await gauge(t, 'funding_destination_circuit_open_longest_seconds')).toBe(0);
    expect(await gauge(t, 'funding_callback_oldest_due_seconds')).toBe(0);

    await t.sql(`INSERT INTO delivery_workers (id, concurrency, expires_at) VALUES ('alive', 1, now() + interval '1 hour'), ('gone', 1, now() - interval '1 second')`);
    expect(await gauge(t, 'funding_delivery_workers')).toBe(1);
    await t.sql(`DELETE FROM delivery_workers`);

    // Two destinations, one open for an hour; a callback due for ten minutes at the closed one,
    // for two hours at the open one (which waits on purpose, and is not counted).
    const p = await createPartner(t);
    const company = (await t.as(p.apiKey, 'post', '/v1/companies', { name: 'F' }).expect(201)).body.id as string;
    for (const [host, due] of [['closed.example', '10 minutes'], ['open.example', '2 hours']]) {
      await t.sql(
        `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
         VALUES ($1, $2, 0, $3, '{}', 'pending', now() - $4::interval)`,
        [p.id, company, `https://${host}/hook`, due],
      );
    }
    await t.sql(`UPDATE destinations SET opened_at = now() - interval '1 hour', next_probe_at = now() + interval '1 hour' WHERE origin = 'https://open.example'`);
    const open = await gauge(t, 'funding_destination_circuit_open_longest_seconds');
    expect(open).toBeGreaterThanOrEqual(3600);
    expect(open).toBeLessThan(3660);
    // The oldest due is what admission's passes saw: two passes after the destination opened.
    const passes = await gauge(t, 'funding_admission_passes_total');
    await until(async () => (await gauge(t, 'funding_admission_passes_total')) >= passes + 2, { timeoutMs: 10_000, what: 'two more admission passes' });
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
      await until(async () => (await gauge(t, 'funding_callback_feed_held_seconds')) >= 1.5, { timeoutMs: 10_000, what: 'the open transaction aged' });
      await session.query('COMMIT');
      await until(async () => (await gauge(t, 'funding_callback_feed_held_seconds')) < 1, { timeoutMs: 10_000, what: 'the gauge back once it ended' });
    } finally {
      await session.end();
    }
  });
});
