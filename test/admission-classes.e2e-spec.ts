import { Client } from 'pg';
import { sessionWithDeadline } from '../src/platform/database/sql-session.js';
import { AdmissionStore } from '../src/callbacks/store/admission-store.js';
import { stateOf } from '../src/delivery/destination-store.js';
import { isFailing, isProven, PROVEN_FOR_MS } from '../src/delivery/destination-window.js';
import { RELAY_TIMEOUT_MS } from '../src/delivery/relay-connection.js';
import { ScratchDatabase, seedCompany } from './support/scratch-database.js';
import { closeRelayScratch, openRelayScratch } from './support/relay-scratch.js';

/**
 * A pass's budget counts every destination's callbacks in flight by class, summed by the
 * admission statement (CANDIDATES' `flight`); its candidates are classed by destination-window.ts's
 * isProven and isFailing, the rule's one owner. The two must agree on every state a destination
 * can be in: one destination with a callback in flight is put in each, and the statement's class
 * compared with the functions'.
 */
describe("the admission statement classes callbacks in flight as destination-window.ts's rule does", () => {
  let s: ScratchDatabase;
  let relay: Client;

  beforeAll(async () => {
    ({ s, relay } = await openRelayScratch());
    const { partnerId, companyId } = await seedCompany(s.pool);
    const record = (host: string, status: string) =>
      s.pool.query(
        `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at, lease_until)
         VALUES ($1, $2, 0, 'https://' || $3 || '/cb', '{}', $4, now() - interval '1 second',
                 CASE WHEN $4 = 'sending' THEN now() + interval '1 hour' END)`,
        [partnerId, companyId, host, status],
      );
    // One destination with a callback due (so the statement returns a row), one with a callback in flight.
    await record('due.test', 'pending');
    await record('flight.test', 'sending');
  }, 60_000);

  afterAll(() => closeRelayScratch(s, relay));

  const openedAt = [null, `now() - interval '1 minute'`];
  const failures = [0, 1, 3];
  const lastOkAt = [
    null,
    `now() - interval '1 second'`,
    `now() - ${PROVEN_FOR_MS - 2000} * interval '1 millisecond'`,
    `now() - ${PROVEN_FOR_MS + 2000} * interval '1 millisecond'`,
  ];
  const states = openedAt.flatMap((o) => failures.flatMap((f) => lastOkAt.map((l) => ({ o, f, l }))));

  it.each(states)('opened_at $o, failures $f, last_ok_at $l', async ({ o, f, l }) => {
    await s.pool.query(
      `UPDATE destinations SET opened_at = ${o ?? 'NULL'}, next_probe_at = ${o ? `now() + interval '1 hour'` : 'NULL'},
              probe_ms = ${o ? 60_000 : 0}, failures = $1, last_ok_at = ${l ?? 'NULL'} WHERE origin LIKE '%flight.test%'`,
      [f],
    );
    const floors = { keys: [], at: [], seq: [], idle: null };
    const rows = await new AdmissionStore().candidates(
      sessionWithDeadline(relay, RELAY_TIMEOUT_MS),
      floors,
      new Set(),
      0,
      PROVEN_FOR_MS,
    );
    expect(rows.map((r) => r.key)).toEqual([expect.stringContaining('due.test')]);
    const { rows: read } = await s.pool.query(
      `SELECT window_size, failures, probe_ms, last_error, probe_id,
              (extract(epoch FROM opened_at) * 1000)::float8 AS opened_at,
              (extract(epoch FROM next_probe_at) * 1000)::float8 AS next_probe_at,
              (extract(epoch FROM last_ok_at) * 1000)::float8 AS last_ok_at
         FROM destinations WHERE origin LIKE '%flight.test%'`,
    );
    const state = stateOf(read[0]);
    expect(rows[0].flight).toEqual([
      { proven: isProven(state, rows[0].now), failing: isFailing(state), sending: 1, waiting: 0 },
    ]);
  });
});
