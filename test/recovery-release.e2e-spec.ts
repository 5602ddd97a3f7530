/**
 * A circuit that closes releases everything that waited on its destination (docs/partners.md,
 * `destination.recovered`): callbacks waiting in a retry's backoff when the circuit opened are due as
 * soon as the probe's 2xx closes it, not at their retry, and `destination.recovered` counts them.
 */
import { companyWithCallback, harness, Partner, TestApp, until } from './support/harness.js';

describe('a closing circuit releases the callbacks waiting in a backoff', () => {
  let t: TestApp;
  let p: Partner;
  let failing = true;
  // Four failed attempts in a row open the circuit: two callbacks' first two attempts, the second
  // step five minutes away. Probes every 300 ms at first.
  const e2e = harness({
    CALLBACK_BREAKER_THRESHOLD: '4',
    CALLBACK_BREAKER_PROBE: '300ms..600ms',
    CALLBACK_RETRY_SCHEDULE: '100ms,5m',
  });
  beforeAll(() => {
    ({ t, p } = e2e);
    e2e.rx.answer = (_h, _req, res) => res.writeHead(failing ? 503 : 204).end();
  });

  const rows = (c: string) =>
    t.sql<{ id: string; status: string; attempt_count: number; wait_s: number }>(
      `SELECT id, status, attempt_count, extract(epoch FROM next_attempt_at - now())::float8 AS wait_s FROM callbacks WHERE company_id = $1 ORDER BY seq`,
      [c],
    );

  it('delivers them within seconds of the probe that closes it, and destination.recovered says how many', async () => {
    const company = await companyWithCallback(t, p, e2e.rx.url('/cb'));
    await company.change();
    await company.change();
    // Both failed twice: the circuit opened, and each waits its five minutes.
    await until(
      async () => {
        const open = await t.sql(`SELECT 1 FROM destinations WHERE opened_at IS NOT NULL`);
        const waiting = await rows(company.c);
        return (
          open.length === 1 && waiting.every((r) => r.status === 'pending' && r.attempt_count === 2 && r.wait_s > 200)
        );
      },
      { what: 'two callbacks in a five-minute backoff behind an open circuit', timeoutMs: 15_000 },
    );

    failing = false;
    // A new callback is due now: the probe carries it.
    const probe = await company.change();
    const recovered = await until(
      async () => {
        const [e] = await t.sql<{ data: { waiting: number }; at: Date }>(
          `SELECT data, created_at AS at FROM operational_events WHERE type = 'destination.recovered'`,
        );
        return e;
      },
      { what: 'destination.recovered', timeoutMs: 15_000 },
    );
    const delivered = await until(
      async () => {
        const all = await rows(company.c);
        return all.every((r) => r.status === 'delivered') ? all : null;
      },
      { what: 'every callback delivered within seconds of the recovery', timeoutMs: 10_000 },
    );

    expect(delivered.map((r) => r.attempt_count)).toEqual([3, 3, 1]);
    expect(delivered[2].id).toBe(probe);
    expect(recovered.data.waiting).toBe(2);
    expect(e2e.rx.on('/cb')).toHaveLength(4 + 3);
  }, 60_000);
});
