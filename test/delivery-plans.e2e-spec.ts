import { Client, ClientBase, PoolClient } from 'pg';
import { openDatabase } from '../src/database/database.js';
import { COUNT_PENDING_AND_FAILED } from '../src/callbacks/store/counts.js';
import { SqlPool } from '../src/database/sql-pool.js';
import { dataSourceOptions } from '../src/data-source.js';
import { ADMIT, CANDIDATES, EXPIRE, LAPSE, OPEN_DESTINATIONS, RELEASE } from '../src/callbacks/store/admission.js';
import { relayClient } from '../src/delivery/callback-relay.js';
import { LOAD } from '../src/callbacks/store/delivery-load.js';
import { DestinationSave, READ_DESTINATIONS, saveParams } from '../src/callbacks/store/destination-states.js';
import { FLUSH_NOTICES } from '../src/callbacks/store/operational-events.js';
import { AttemptRecord, recordFor, recordParams, saveFor } from '../src/callbacks/store/settlement.js';
import { PRUNE_CALLBACKS, PRUNE_PLANNER } from '../src/callbacks/store/retention.js';
import { FEED_PAGE } from '../src/callbacks/store/feed-page.js';
import { dropRunData, runIdentity, TEST_REDIS_URL } from './support/test-app.js';
import { literal, PlanNode, scansOf, sortsOf } from './support/plans.js';

/**
 * Every statement on the delivery path (and the partners' feed page) costs O(rows it touches), under the custom plan and the
 * generic one (a prepared statement's plan after five runs), with the statistics a deployment
 * without autovacuum has: taken while one destination's backlog was all `pending`, stale since.
 * Each statement, imported from the code and run with its connection's settings, is explained
 * (ANALYZE: it runs, rolled back) against a table of BACKLOG rows; no node may read `callbacks`
 * or `callback_attempts` sequentially or look at more than EXAMINED_MAX of their rows, nor sort
 * their rows (rows sorted were all read first), and a destination's pending callbacks are read
 * by an equality on it (PER_DESTINATION).
 */
const BACKLOG = 30_000;
/** The most rows one of these statements touches is a batch of 1,000 (expiry, retention). */
const EXAMINED_MAX = 2_000;
/**
 * A destination's pending callbacks are read with an equality on the destination, so that the
 * bound on the second column (due by now, schedule ended) ends the scan: with a range on the
 * destination the scan goes on through every entry of it that fails the bound, uncounted above
 * (its callbacks not due yet, say). Admission's start at the destination's floor, a bound on
 * (next_attempt_at, seq) too: dead entries below it are not read at all.
 */
const PER_DESTINATION = new Set(['callbacks_admission_idx', 'callbacks_pending_schedule_idx']);
const BIG = 'http://127.0.0.1:1';
const SMALL = 'http://127.0.0.1:2';
/** A destination whose callbacks all wait for their retry: nothing due. */
const LATER = 'http://127.0.0.1:3';

/** The tables whose scans are checked. */
const SCANNED = new Set(['callbacks', 'callback_attempts']);

const PARTNER = '00000000-0000-0000-0000-000000000001';

/** A feed position half way through the callbacks (xact, seq). */
async function middleOfFeed(queue: ClientBase): Promise<[string, string]> {
  const { rows } = await queue.query(`SELECT xact::text AS xact, seq::text AS seq FROM callbacks ORDER BY seq OFFSET (SELECT count(*) / 2 FROM callbacks) LIMIT 1`);
  return [rows[0]?.xact ?? '0', rows[0]?.seq ?? '0'];
}

/** The partner and company every callback here belongs to. */
async function addCompany(queue: ClientBase): Promise<void> {
  await queue.query(`INSERT INTO partners (id, name, api_key_hash, signing_secret) VALUES ('00000000-0000-0000-0000-000000000001', 'p', 'h', 's')`);
  await queue.query(`INSERT INTO companies (id, partner_id, name, currency, credit_status) VALUES ('00000000-0000-0000-0000-000000000002', '00000000-0000-0000-0000-000000000001', 'c', 'EUR', 'active')`);
}

/** `n` pending callbacks to `origin`, due from `age` ago on, a millisecond apart. */
function addCallbacks(queue: ClientBase, origin: string, n: number, age: string) {
  return queue.query(
    `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at, created_at, schedule_started_at)
     SELECT '00000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-000000000002', 0, $1, '{}', 'pending',
            now() - $2::interval + g * interval '1 millisecond', now() - interval '1 day', now() - interval '1 day'
       FROM generate_series(1, $3::int) g`,
    [`${origin}/cb`, age, n],
  );
}

/** A database of its own, migrated, with the company every callback belongs to; a connection of the hand-written SQL's pool (SqlPool) and the relay's. */
async function migratedDatabase(databaseUrl: string): Promise<{ pool: SqlPool; queue: PoolClient; relay: Client }> {
  const db = await openDatabase({ ...dataSourceOptions(databaseUrl), url: databaseUrl } as never);
  await db.destroy();
  const pool = new SqlPool({ databaseUrl });
  const queue = await pool.pool.connect();
  const relay = relayClient(databaseUrl);
  await relay.connect();
  await addCompany(queue);
  return { pool, queue, relay };
}

async function dropDatabase(run: ReturnType<typeof runIdentity>, pool: SqlPool | undefined, queue: PoolClient | undefined, relay: Client | undefined): Promise<void> {
  queue?.release();
  await pool?.onApplicationShutdown();
  await relay?.end();
  await dropRunData({ databaseUrl: run.databaseUrl, redisUrl: TEST_REDIS_URL, queuePrefix: run.queuePrefix });
}

type Statement = { name: string; on: ClientBase; text: string; params: unknown[]; setup?: string };

/** The statements and their arguments as the code passes them; `on` is the connection the code runs them on. */
async function statements(queue: ClientBase, relay: Client): Promise<Statement[]> {
  const sending = (await queue.query(`SELECT id, attempt_count, (extract(epoch FROM schedule_started_at) * 1000000)::bigint::text AS k FROM callbacks WHERE status = 'sending' LIMIT 20`)).rows;
  const ids = sending.map((r) => r.id as string);
  const columns = { window_size: 3, failures: 0, probe_ms: 0, last_error: null, opened_at: null, next_probe_at: null, last_ok_at: Date.now() };
  const saves = (reported: DestinationSave['reported']): unknown[] => saveParams([{ origin: BIG, columns, version: '0', reported, failingSince: reported && Date.now() - 60_000 }]);
  const fate = (status: 'delivered' | 'failed') => ({ status, delayMs: null, lastError: status === 'failed' ? 'HTTP 410' : null, keepsError: false, counts: true });
  const records = (status: 'delivered' | 'failed'): unknown[] =>
    recordParams(
      sending.map((r): AttemptRecord => ({
        id: r.id, attemptCount: r.attempt_count, scheduleKey: r.k, startedAt: Date.now(), durationMs: 5, statusCode: 200, error: null, responseBody: 'ok', sourceAddress: null,
        fate: fate(status), ifRedelivered: fate(status), ifUrlRemoved: fate(status),
      })),
    );
  // The variants that record operational events: a batch that closes a circuit and fails callbacks for good.
  const withEvents = recordFor({ circuit: true, failures: true });
  return [
    { name: 'admission candidates', on: relay, text: CANDIDATES, params: [[], [], [], null] },
    { name: 'admission admit (big destination)', on: relay, text: ADMIT, params: [[BIG], [40], 45_000, [null], [null]] },
    { name: 'admission admit (small destination)', on: relay, text: ADMIT, params: [[SMALL], [40], 45_000, [null], [null]] },
    { name: 'admission release', on: relay, text: RELEASE, params: [ids] },
    { name: 'admission lapse', on: relay, text: LAPSE, params: [] },
    { name: 'admission open destinations', on: relay, text: OPEN_DESTINATIONS, params: [] },
    { name: 'admission expire', on: relay, text: EXPIRE, params: [60_000, [BIG], ['destination unavailable']] },
    { name: 'admission flush notices', on: relay, text: FLUSH_NOTICES, params: [] },
    { name: 'delivery load', on: queue, text: LOAD, params: [ids] },
    { name: 'settlement record', on: queue, text: recordFor({ circuit: false, failures: false }).text, params: [...records('delivered'), ...saves(null)] },
    { name: 'settlement record with events', on: queue, text: withEvents.text, params: [...records('failed'), ...saves('closed')] },
    { name: 'settlement read', on: queue, text: READ_DESTINATIONS, params: [[BIG]] },
    { name: 'settlement refold', on: queue, text: saveFor({ circuit: false }).text, params: saves(null) },
    { name: 'settlement refold with events', on: queue, text: saveFor({ circuit: true }).text, params: saves('opened') },
    { name: 'retention prune', on: queue, text: PRUNE_CALLBACKS, params: [7 * 86_400_000], setup: PRUNE_PLANNER },
    // A partner's feed, from the start and from its middle (the API's, on the same connections).
    { name: 'feed page from the start', on: queue, text: FEED_PAGE, params: [PARTNER, '0', '0', 100] },
    { name: 'feed page from a position', on: queue, text: FEED_PAGE, params: [PARTNER, ...(await middleOfFeed(queue)), 100] },
    // The callbacks gauge, counting up to a cap below the backlog: it reads as far as the cap.
    { name: 'callbacks gauge', on: queue, text: COUNT_PENDING_AND_FAILED, params: [1000] },
  ];
}

/**
 * The statistics: taken while one destination's backlog was all `pending` (then stale), or never
 * taken (a deployment without autovacuum that never ran ANALYZE: the planner knows only the
 * tables' and indexes' sizes, so a narrower index looks cheaper to read whole and sort). Never
 * taken, the statements checked are the admission relay's, which run many times a second.
 */
describe.each([['analysed as the backlog stood', true], ['never analysed', false]])('delivery statements cost O(rows touched) under custom and generic plans, statistics %s', (_stats, analysed) => {
  const run = runIdentity();
  let pool: SqlPool;
  let queue: PoolClient;
  let relay: Client;

  beforeAll(async () => {
    ({ pool, queue, relay } = await migratedDatabase(run.databaseUrl));
    const add = (origin: string, n: number, age: string) => addCallbacks(queue, origin, n, age);
    // One destination's day-long backlog, analysed as it stood (then never again: autovacuum off).
    await add(BIG, BACKLOG, '1 day');
    await queue.query(`INSERT INTO callback_attempts (callback_id, number, started_at, duration_ms, status_code)
                       SELECT id, 1, created_at, 5, 503 FROM callbacks`);
    if (analysed) await queue.query('ANALYZE');
    // Since: the head of it delivered long ago (dead tuples, and delivered rows the statistics
    // never saw), some in flight with lapsed leases, a second destination with a few due.
    await queue.query(`WITH h AS (SELECT id FROM callbacks ORDER BY next_attempt_at LIMIT 5000)
                       UPDATE callbacks c SET status = 'delivered', next_attempt_at = NULL, delivered_at = now() - interval '30 days' FROM h WHERE c.id = h.id`);
    await queue.query(`WITH h AS (SELECT id FROM callbacks WHERE status = 'pending' ORDER BY next_attempt_at LIMIT 40)
                       UPDATE callbacks c SET status = 'sending', lease_until = now() - interval '1 second' FROM h WHERE c.id = h.id`);
    await add(SMALL, 200, '1 hour');
    await add(LATER, 2_000, '-1 hour');
    // Open, its probe due: admission reads its callbacks (one not due would be read not at all).
    await queue.query(`UPDATE destinations SET opened_at = now() - interval '1 hour', next_probe_at = now() - interval '1 second' WHERE origin = $1`, [BIG]);
    await queue.query(`INSERT INTO delivery_workers VALUES ('w', 200, now() + interval '1 hour')`);
  }, 60_000);

  afterAll(() => dropDatabase(run, pool, queue, relay));

  /** EXPLAIN ANALYZE of a statement run as the code runs it (prepared, in this plan mode), rolled back. */
  async function explain(s: Statement, mode: string): Promise<PlanNode> {
    await s.on.query('BEGIN');
    try {
      if (s.setup) await s.on.query(s.setup);
      await s.on.query(`SET LOCAL plan_cache_mode = ${mode}`);
      await s.on.query(`PREPARE hot AS ${s.text}`);
      const args = s.params.length ? `(${s.params.map(literal).join(', ')})` : '';
      const { rows } = await s.on.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE hot${args}`);
      return (rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0].Plan;
    } finally {
      await s.on.query('ROLLBACK');
      await s.on.query('DEALLOCATE ALL');
    }
  }

  for (const mode of ['force_custom_plan', 'force_generic_plan']) {
    it(`no statement reads the callbacks table whole or sorts its rows (${mode})`, async () => {
      const found: string[] = [];
      for (const s of (await statements(queue, relay)).filter((x) => analysed || x.on === relay)) {
        const plan = await explain(s, mode);
        for (const sort of sortsOf(plan, SCANNED)) found.push(`${s.name}: ${sort}`);
        for (const scan of scansOf(plan, SCANNED)) {
          // Admission's reads (the relay's, each second) start at their floor: a bound of the index, not a
          // filter after it. The waiting count of an operational event (once per opening or closing) is
          // bounded by its LIMIT alone, which EXAMINED_MAX checks.
          const unbounded = s.on === relay && PER_DESTINATION.has(scan.index ?? '') && (!/\(destination = /.test(scan.cond ?? '') || (scan.index === 'callbacks_admission_idx' && !/ROW\(next_attempt_at, seq\) >= /.test(scan.cond ?? '')));
          if (scan.type === 'Seq Scan' || scan.examined > EXAMINED_MAX || unbounded) {
            found.push(`${s.name}: ${scan.type} on ${scan.relation}${scan.index ? ` using ${scan.index} (${scan.cond})` : ''}, ${scan.examined} rows examined`);
          }
        }
      }
      expect(found).toEqual([]);
    });

    it(`admission starts each destination at its floor, past the index entries its admitted callbacks left (${mode})`, async () => {
      const [{ at, seq }] = (
        await queue.query(
          `SELECT (extract(epoch FROM next_attempt_at) * 1000000)::bigint::text AS at, seq::text FROM callbacks
            WHERE destination = $1 AND status = 'pending' ORDER BY next_attempt_at, seq LIMIT 1`,
          [BIG],
        )
      ).rows;
      const pages = async (params: unknown[]) => {
        const scans = scansOf(await explain({ name: 'candidates', on: relay, text: CANDIDATES, params }, mode), SCANNED).filter((x) => x.index === 'callbacks_admission_idx');
        return scans.reduce((sum, x) => sum + x.pages, 0);
      };
      // The head of BIG's backlog, delivered (beforeAll), left 5,000 dead entries there.
      const fromTheStart = await pages([[], [], [], null]);
      const fromFloors = await pages([[BIG, SMALL], [at, '0'], [seq, '0'], '0']);
      // About 30 pages of them: read from the start, not from the floor.
      expect(fromTheStart - fromFloors).toBeGreaterThan(20);
    });
  }
});

/**
 * A prepared statement keeps its generic plan until something invalidates it (an ANALYZE, a
 * VACUUM, DDL): in a deployment without autovacuum, the plan a statement got in its first minutes,
 * on tables of a few rows, is the one it runs with after a backlog of any size arrived. Each
 * statement is prepared on its connection and run while the tables are small (its generic plan
 * made then), the backlog arrives with no ANALYZE, and the cached plan must still touch only the
 * rows it needs.
 */
describe('delivery statements planned while the tables were small, run once a backlog arrived', () => {
  const run = runIdentity();
  let pool: SqlPool;
  let queue: PoolClient;
  let relay: Client;

  beforeAll(async () => {
    ({ pool, queue, relay } = await migratedDatabase(run.databaseUrl));
    await addCallbacks(queue, BIG, 20, '1 hour');
    await queue.query(`UPDATE callbacks SET status = 'sending', lease_until = now() + interval '1 minute' WHERE seq IN (SELECT seq FROM callbacks ORDER BY seq LIMIT 5)`);
    await queue.query(`INSERT INTO delivery_workers VALUES ('w', 200, now() + interval '1 hour')`);
    await queue.query('ANALYZE');
  }, 60_000);

  afterAll(() => dropDatabase(run, pool, queue, relay));

  it('keeps no plan that reads the callbacks table whole', async () => {
    const small = await statements(queue, relay);
    // Each run once as the code runs it, prepared, with its generic plan (made now, on the small tables).
    for (const [i, s] of small.entries()) {
      await s.on.query('SET plan_cache_mode = force_generic_plan');
      await s.on.query(`PREPARE cached${i} AS ${s.text}`);
      await s.on.query('BEGIN');
      if (s.setup) await s.on.query(s.setup);
      await s.on.query(`EXECUTE cached${i}${s.params.length ? `(${s.params.map(literal).join(', ')})` : ''}`);
      await s.on.query('ROLLBACK');
    }
    // The backlog arrives: no ANALYZE, no VACUUM (autovacuum off).
    await addCallbacks(queue, BIG, BACKLOG, '1 day');
    await addCallbacks(queue, SMALL, 200, '1 hour');
    await queue.query(`UPDATE callbacks SET status = 'sending', lease_until = now() - interval '1 second' WHERE seq IN (SELECT seq FROM callbacks WHERE status = 'pending' ORDER BY seq DESC LIMIT 40)`);
    const found: string[] = [];
    for (const [i, s] of (await statements(queue, relay)).entries()) {
      await s.on.query('BEGIN');
      try {
        if (s.setup) await s.on.query(s.setup);
        const { rows } = await s.on.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE cached${i}${s.params.length ? `(${s.params.map(literal).join(', ')})` : ''}`);
        const plan = (rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0].Plan;
        for (const scan of scansOf(plan, SCANNED)) if (scan.type === 'Seq Scan' || scan.examined > EXAMINED_MAX) found.push(`${s.name}: ${scan.type} on ${scan.relation}${scan.index ? ` using ${scan.index} (${scan.cond})` : ""}, ${scan.examined} rows examined`);
      } finally {
        await s.on.query('ROLLBACK');
      }
    }
    expect(found).toEqual([]);
  }, 60_000);
});
