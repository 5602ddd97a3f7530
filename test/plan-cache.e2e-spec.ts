import type { ClientBase, PoolClient } from 'pg';
import { Client } from 'pg';
import { ADMIT, CANDIDATES } from '../src/callbacks/store/admission.js';
import { LOAD } from '../src/callbacks/store/delivery-load.js';
import { READ_DESTINATIONS, saveParams } from '../src/callbacks/store/destination-states.js';
import { AttemptRecord, recordFor, recordParams } from '../src/callbacks/store/settlement.js';
import { relayClient } from '../src/delivery/callback-relay.js';
import { scratchDatabase, ScratchDatabase, seedCompany } from './support/scratch-database.js';

const ORIGIN = 'http://127.0.0.1:1';
const RUNS = 8;

type Run = { name: string; on: () => ClientBase; text: string; values: () => unknown[] };

/**
 * The statements a delivery runs for every batch are prepared by name on the connections of
 * hand-written SQL (SqlPool's, the relay's) and planned once per connection: every run takes the
 * generic plan (the one test/delivery-plans.e2e-spec.ts checks), none is planned for its values.
 * The tables are never analysed, as in a deployment without autovacuum: there PostgreSQL's own
 * choice planned settlement's record anew for every batch.
 */
describe('delivery statements are planned once per connection', () => {
  let s: ScratchDatabase;
  let queue: PoolClient;
  let relay: Client;
  let sending: { id: string; attempt_count: number; k: string }[];

  beforeAll(async () => {
    s = await scratchDatabase();
    const { partnerId, companyId } = await seedCompany(s.pool);
    await s.pool.query(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, lease_until)
       SELECT $1, $2, 0, $3 || '/cb/' || g, '{}', 'sending', now() + interval '1 minute' FROM generate_series(1, 2000) g`,
      [partnerId, companyId, ORIGIN],
    );
    sending = (await s.pool.query(`SELECT id, attempt_count, (extract(epoch FROM schedule_started_at) * 1000000)::bigint::text AS k FROM callbacks LIMIT 20`)).rows;
    queue = await s.sql.pool.connect();
    relay = relayClient(s.databaseUrl);
    await relay.connect();
  }, 60_000);

  afterAll(async () => {
    queue?.release();
    await relay?.end();
    await s?.close();
  });

  const fate = { status: 'delivered' as const, delayMs: null, lastError: null, keepsError: false, counts: true };
  const records = (): unknown[] =>
    recordParams(
      sending.map((r): AttemptRecord => ({
        id: r.id, attemptCount: r.attempt_count, scheduleKey: r.k, startedAt: Date.now(), durationMs: 5, statusCode: 204, error: null, responseBody: null, sourceAddress: null,
        fate, ifRedelivered: fate, ifUrlRemoved: fate,
      })),
    );
  const columns = { window_size: 3, failures: 0, probe_ms: 0, last_error: null, opened_at: null, next_probe_at: null, last_ok_at: Date.now() };
  const runs = (): Run[] => [
    { name: 'delivery-load', on: () => queue, text: LOAD, values: () => [sending.map((r) => r.id)] },
    { name: 'settlement-read', on: () => queue, text: READ_DESTINATIONS, values: () => [[ORIGIN]] },
    { name: 'settlement-record', on: () => queue, text: recordFor({ circuit: false, failures: false }).text, values: () => [...records(), ...saveParams([{ origin: ORIGIN, columns, version: '0', reported: null, failingSince: null }])] },
    { name: 'admission-candidates', on: () => relay, text: CANDIDATES, values: () => [[], [], [], null] },
    { name: 'admission-admit', on: () => relay, text: ADMIT, values: () => [[ORIGIN], [10], 45_000, [null], [null]] },
  ];

  it('runs each prepared statement with its generic plan from the first run on', async () => {
    for (const r of runs()) {
      for (let i = 0; i < RUNS; i++) {
        // Each run rolled back: every one writes as the first did.
        await r.on().query('BEGIN');
        try {
          await r.on().query({ name: r.name, text: r.text, values: r.values() });
        } finally {
          await r.on().query('ROLLBACK');
        }
      }
    }
    const plans = async (conn: ClientBase) =>
      (await conn.query<{ name: string; generic_plans: string; custom_plans: string }>(`SELECT name, generic_plans::text, custom_plans::text FROM pg_prepared_statements WHERE NOT from_sql ORDER BY name`)).rows;
    const found = [...(await plans(queue)), ...(await plans(relay))].sort((a, b) => a.name.localeCompare(b.name));
    expect(found).toEqual(
      runs()
        .map((r) => ({ name: r.name, generic_plans: String(RUNS), custom_plans: '0' }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    );
  });
});
