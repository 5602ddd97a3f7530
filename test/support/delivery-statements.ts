import { Client, ClientBase, PoolClient } from 'pg';
import { destinationKey, originOfKey } from '../../src/callbacks/callback-destination.js';
import { openDatabase } from '../../src/platform/database/database.js';
import { SqlPool } from '../../src/platform/database/sql-pool.js';
import { dataSourceOptions } from '../../src/data-source.js';
import { relayClient } from '../../src/delivery/relay-connection.js';
import { DestinationSave, saveParams } from '../../src/callbacks/store/destination-states.js';
import { AttemptRecord, recordParams } from '../../src/callbacks/store/settlement.js';
import { storeStatement } from '../../src/callbacks/store/statements.js';
import { dropRunData, runIdentity, TEST_REDIS_URL } from './run-identity.js';
import { ADMITTED_WAITING_MS, LEASE_MARGIN_MS } from '../../src/delivery/admission.js';
import { PROVEN_FOR_MS } from '../../src/delivery/destination-window.js';

/** Admission's `waitingLeases` (delivery/admission.ts): the default lease less ADMITTED_WAITING_MS. */
export const WAITING_LEASES = 15_000 + LEASE_MARGIN_MS - ADMITTED_WAITING_MS;

/**
 * The statements of the delivery path (and the partners' feed page and the callbacks gauge),
 * from the callback store's catalogue (src/callbacks/store/statements.ts), with their arguments as the code passes them and the connection it runs
 * each on (SqlPool's or the relay's), on a database of their own: what the plans tests run.
 */
const PARTNER = '00000000-0000-0000-0000-000000000001';

/** The destinations (by key: the partner's origin) the statements run on. */
export const BIG = destinationKey(PARTNER, 'http://127.0.0.1:1');
export const SMALL = destinationKey(PARTNER, 'http://127.0.0.1:2');
/** A destination whose callbacks all wait for their retry: nothing due. */
export const LATER = destinationKey(PARTNER, 'http://127.0.0.1:3');

/** A feed position half way through the callbacks (xact, seq). */
async function middleOfFeed(queue: ClientBase): Promise<[string, string]> {
  const { rows } = await queue.query<{ xact: string; seq: string }>(
    `SELECT xact::text AS xact, seq::text AS seq FROM callbacks ORDER BY seq OFFSET (SELECT count(*) / 2 FROM callbacks) LIMIT 1`,
  );
  return [rows[0]?.xact ?? '0', rows[0]?.seq ?? '0'];
}

/** The partner and company every callback here belongs to. */
async function addCompany(queue: ClientBase): Promise<void> {
  await queue.query(
    `INSERT INTO partners (id, name, api_key_hash, signing_secret) VALUES ('00000000-0000-0000-0000-000000000001', 'p', 'h', 's')`,
  );
  await queue.query(
    `INSERT INTO companies (id, partner_id, name, currency, credit_status) VALUES ('00000000-0000-0000-0000-000000000002', '00000000-0000-0000-0000-000000000001', 'c', 'EUR', 'active')`,
  );
}

/** `n` pending callbacks to the destination, due from `age` ago on, a millisecond apart. */
export function addCallbacks(queue: ClientBase, destination: string, n: number, age: string) {
  return queue.query(
    `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at, created_at, schedule_started_at)
     SELECT '00000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-000000000002', 0, $1, '{}', 'pending',
            now() - $2::interval + g * interval '1 millisecond', now() - interval '1 day', now() - interval '1 day'
       FROM generate_series(1, $3::int) g`,
    [`${originOfKey(destination)}/cb`, age, n],
  );
}

/** A database of its own, migrated, with the company every callback belongs to; a connection of the hand-written SQL's pool (SqlPool) and the relay's. */
async function migratedDatabase(databaseUrl: string): Promise<{ pool: SqlPool; queue: PoolClient; relay: Client }> {
  const db = await openDatabase({ ...dataSourceOptions(databaseUrl), url: databaseUrl });
  await db.destroy();
  const pool = new SqlPool({ databaseUrl });
  const queue = await pool.pool.connect();
  const relay = relayClient(databaseUrl);
  await relay.connect();
  await addCompany(queue);
  return { pool, queue, relay };
}

async function dropDatabase(
  run: ReturnType<typeof runIdentity>,
  pool: SqlPool | undefined,
  queue: PoolClient | undefined,
  relay: Client | undefined,
): Promise<void> {
  queue?.release();
  await pool?.onApplicationShutdown();
  await relay?.end();
  await dropRunData({ databaseUrl: run.databaseUrl, redisUrl: TEST_REDIS_URL, queuePrefix: run.queuePrefix });
}

/** A describe's database and its connections (SqlPool's and the relay's), there from its beforeAll on. */
export interface DeliveryDatabase {
  pool: SqlPool;
  queue: PoolClient;
  relay: Client;
}

/** A database of its own for the enclosing describe: migrated, filled by `fill` (within `timeoutMs`) before its tests, dropped after them. */
export function deliveryDatabase(fill: (queue: PoolClient) => Promise<void>, timeoutMs = 60_000): DeliveryDatabase {
  const run = runIdentity();
  const db = {} as DeliveryDatabase;
  beforeAll(async () => {
    Object.assign(db, await migratedDatabase(run.databaseUrl));
    await fill(db.queue);
  }, timeoutMs);
  afterAll(() => dropDatabase(run, db.pool, db.queue, db.relay));
  return db;
}

export type Statement = { name: string; on: ClientBase; text: string; params: unknown[]; setup?: string };

/** `work` on the statement's connection, after its setup, in a transaction rolled back after it. */
export async function rolledBack<T>(s: Statement, work: () => Promise<T>): Promise<T> {
  await s.on.query('BEGIN');
  try {
    if (s.setup) await s.on.query(s.setup);
    return await work();
  } finally {
    await s.on.query('ROLLBACK');
  }
}

/** The statements and their arguments as the code passes them; `on` is the connection the code runs them on. */
export async function statements(queue: ClientBase, relay: Client): Promise<Statement[]> {
  const sending = (
    await queue.query<{ id: string; partner_id: string; attempt_count: number; k: string }>(
      `SELECT id, partner_id, attempt_count, (extract(epoch FROM schedule_started_at) * 1000000)::bigint::text AS k FROM callbacks WHERE status = 'sending' LIMIT 20`,
    )
  ).rows;
  const ids = sending.map((r) => r.id);
  const columns = {
    window_size: 3,
    failures: 0,
    probe_ms: 0,
    last_error: null,
    opened_at: null,
    next_probe_at: null,
    last_ok_at: Date.now(),
  };
  const saves = (reported: DestinationSave['reported']): unknown[] =>
    saveParams([{ key: BIG, columns, version: '0', reported, failingSince: reported && Date.now() - 60_000 }]);
  const fate = (status: 'delivered' | 'failed') => ({
    status,
    delayMs: null,
    lastError: status === 'failed' ? 'HTTP 410' : null,
    keepsError: false,
    counts: true,
  });
  const records = (status: 'delivered' | 'failed'): unknown[] =>
    recordParams(
      sending.map((r): AttemptRecord => ({
        id: r.id,
        partnerId: r.partner_id,
        attemptCount: r.attempt_count,
        scheduleKey: r.k,
        startedAt: Date.now(),
        durationMs: 5,
        statusCode: 200,
        error: null,
        responseBody: 'ok',
        sourceAddress: null,
        kind: 'retry',
        scheduleNumber: 2,
        scheduleAllows: 8,
        requestHeaders: { 'webhook-id': r.id },
        responseStatus: 'HTTP/1.1 200 OK',
        responseHeaders: [['content-length', '2']],
        fate: fate(status),
        ifRedelivered: fate(status),
        ifUrlRemoved: fate(status),
      })),
    );
  const text = (name: string) => storeStatement(name).text;
  // The newest of the big destination's waiting callbacks, asked for as its probe: the last of its index range.
  const asked =
    (
      await queue.query<{ id: string }>(
        `SELECT id FROM callbacks WHERE destination = $1 AND status = 'pending' ORDER BY seq DESC LIMIT 1`,
        [BIG],
      )
    ).rows[0]?.id ?? null;
  return [
    {
      name: 'admission candidates',
      on: relay,
      text: text('admission-candidates'),
      params: [[], [], [], null, [], WAITING_LEASES, PROVEN_FOR_MS],
    },
    // A pass that leaves a destination catching up unread (src/delivery/catch-up.ts).
    {
      name: 'admission candidates (one catching up unread)',
      on: relay,
      text: text('admission-candidates'),
      params: [[], [], [], null, [BIG], WAITING_LEASES, PROVEN_FOR_MS],
    },
    {
      name: 'admission admit (big destination)',
      on: relay,
      text: text('admission-admit'),
      params: [[BIG], [40], 45_000, [null], [null]],
    },
    {
      name: 'admission admit (small destination)',
      on: relay,
      text: text('admission-admit'),
      params: [[SMALL], [40], 45_000, [null], [null]],
    },
    // Open destinations' probes redeliveries asked for (primary-key probes): one waiting, one no longer there.
    {
      name: 'admission admit asked-for probes',
      on: relay,
      text: text('admission-admit-probes'),
      params: [[BIG, SMALL], [asked, asked], 45_000],
    },
    { name: 'admission clear asks', on: relay, text: text('admission-clear-asks'), params: [[BIG], [asked]] },
    { name: 'admission release', on: relay, text: text('admission-release'), params: [ids] },
    { name: 'admission lapse', on: relay, text: text('admission-lapse'), params: [] },
    { name: 'admission open destinations', on: relay, text: text('admission-open'), params: [] },
    {
      name: 'admission expire',
      on: relay,
      text: text('admission-expire'),
      params: [60_000, [BIG], ['destination unavailable']],
    },
    { name: 'admission flush notices', on: relay, text: text('admission-flush-notices'), params: [] },
    { name: 'delivery load', on: queue, text: text('callback-delivery-load'), params: [ids] },
    {
      name: 'settlement record',
      on: queue,
      text: text('settlement-record'),
      params: [...records('delivered'), ...saves(null)],
    },
    // The variant that records operational events: a batch that closes a circuit and fails callbacks for good.
    {
      name: 'settlement record with events',
      on: queue,
      text: text('settlement-record+circuit+failures'),
      params: [...records('failed'), ...saves('closed')],
    },
    { name: 'settlement read', on: queue, text: text('settlement-read'), params: [[BIG]] },
    { name: 'settlement refold', on: queue, text: text('settlement-refold'), params: saves(null) },
    {
      name: 'settlement refold with events',
      on: queue,
      text: text('settlement-refold+circuit'),
      params: saves('opened'),
    },
    // Closing releases the destination's callbacks in backoff: a range past its callbacks due already.
    {
      name: 'settlement refold closing a circuit',
      on: queue,
      text: text('settlement-refold+circuit'),
      params: saves('closed'),
    },
    {
      name: 'retention prune',
      on: queue,
      text: text('retention-prune'),
      params: [7 * 86_400_000],
      setup: storeStatement('retention-prune').setup,
    },
    // A partner's feed, from the start and from its middle (the API's, on the same connections).
    { name: 'feed page from the start', on: queue, text: text('callback-feed-page'), params: [PARTNER, '0', '0', 100] },
    {
      name: 'feed page from a position',
      on: queue,
      text: text('callback-feed-page'),
      params: [PARTNER, ...(await middleOfFeed(queue)), 100],
    },
    // The callbacks gauge, counting up to a cap below the backlog: it reads as far as the cap.
    { name: 'callbacks gauge', on: queue, text: text('callbacks-gauge'), params: [1000] },
  ];
}
