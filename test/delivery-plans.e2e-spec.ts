import { storeStatement } from '../src/callbacks/store/statements.js';
import { PROVEN_FOR_MS } from '../src/delivery/destination-window.js';
import { literal, PlanNode, scansOf, sortsOf } from './support/plans.js';
import {
  addCallbacks,
  BIG,
  deliveryDatabase,
  LATER,
  rolledBack,
  SMALL,
  Statement,
  statements,
  WAITING_LEASES,
} from './support/delivery-statements.js';

/**
 * Every statement on the delivery path (and the partners' feed page) costs O(rows it touches), under the custom plan and the
 * generic one (the one SqlPool's and the relay's connections run: PLANNER_SETTINGS), with the statistics a deployment
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

/** The tables whose scans are checked. */
const SCANNED = new Set(['callbacks', 'callback_attempts']);

/**
 * The statistics: taken while one destination's backlog was all `pending` (then stale), or never
 * taken (a deployment without autovacuum that never ran ANALYZE: the planner knows only the
 * tables' and indexes' sizes, so a narrower index looks cheaper to read whole and sort). Never
 * taken, the statements checked are the admission relay's, which run many times a second.
 */
describe.each([
  ['analysed as the backlog stood', true],
  ['never analysed', false],
])('delivery statements cost O(rows touched) under custom and generic plans, statistics %s', (_stats, analysed) => {
  const db = deliveryDatabase(async (queue) => {
    const add = (origin: string, n: number, age: string) => addCallbacks(queue, origin, n, age);
    // One destination's day-long backlog, analysed as it stood (then never again: autovacuum off).
    await add(BIG, BACKLOG, '1 day');
    await queue.query(`INSERT INTO callback_attempts (callback_id, partner_id, number, started_at, duration_ms, status_code)
                       SELECT id, partner_id, 1, created_at, 5, 503 FROM callbacks`);
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
    await queue.query(
      `UPDATE destinations SET opened_at = now() - interval '1 hour', next_probe_at = now() - interval '1 second' WHERE key = $1`,
      [BIG],
    );
    await queue.query(`INSERT INTO delivery_workers VALUES ('w', 200, now() + interval '1 hour')`);
  });

  /** EXPLAIN ANALYZE of a statement run as the code runs it (prepared, in this plan mode), rolled back. */
  async function explain(s: Statement, mode: string): Promise<PlanNode> {
    try {
      return await rolledBack(s, async () => {
        await s.on.query(`SET LOCAL plan_cache_mode = ${mode}`);
        await s.on.query(`PREPARE hot AS ${s.text}`);
        const args = s.params.length ? `(${s.params.map(literal).join(', ')})` : '';
        const { rows } = await s.on.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE hot${args}`);
        return (rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0].Plan;
      });
    } finally {
      await s.on.query('DEALLOCATE ALL');
    }
  }

  for (const mode of ['force_custom_plan', 'force_generic_plan']) {
    it(`no statement reads the callbacks table whole or sorts its rows (${mode})`, async () => {
      const { queue, relay } = db;
      const found: string[] = [];
      for (const s of (await statements(queue, relay)).filter((x) => analysed || x.on === relay)) {
        const plan = await explain(s, mode);
        for (const sort of sortsOf(plan, SCANNED)) found.push(`${s.name}: ${sort}`);
        for (const scan of scansOf(plan, SCANNED)) {
          // Admission's reads (the relay's, each second) start at their floor: a bound of the index, not a
          // filter after it. The waiting count of an operational event (once per opening or closing) is
          // bounded by its LIMIT alone, which EXAMINED_MAX checks.
          const unbounded =
            s.on === relay &&
            PER_DESTINATION.has(scan.index ?? '') &&
            (!/\(destination = /.test(scan.cond ?? '') ||
              (scan.index === 'callbacks_admission_idx' && !/ROW\(next_attempt_at, seq\) >= /.test(scan.cond ?? '')));
          if (scan.type === 'Seq Scan' || scan.examined > EXAMINED_MAX || unbounded) {
            found.push(
              `${s.name}: ${scan.type} on ${scan.relation}${scan.index ? ` using ${scan.index} (${scan.cond})` : ''}, ${scan.examined} rows examined`,
            );
          }
        }
      }
      expect(found).toEqual([]);
    });

    it(`admission starts each destination at its floor, past the index entries its admitted callbacks left (${mode})`, async () => {
      const { queue, relay } = db;
      const [{ at, seq }] = (
        await queue.query(
          `SELECT (extract(epoch FROM next_attempt_at) * 1000000)::bigint::text AS at, seq::text FROM callbacks
            WHERE destination = $1 AND status = 'pending' ORDER BY next_attempt_at, seq LIMIT 1`,
          [BIG],
        )
      ).rows;
      const pages = async (params: unknown[]) => {
        const scans = scansOf(
          await explain(
            { name: 'candidates', on: relay, text: storeStatement('admission-candidates').text, params },
            mode,
          ),
          SCANNED,
        ).filter((x) => x.index === 'callbacks_admission_idx');
        return scans.reduce((sum, x) => sum + x.pages, 0);
      };
      // The head of BIG's backlog, delivered (beforeAll), left 5,000 dead entries there.
      const fromTheStart = await pages([[], [], [], null, [], WAITING_LEASES, PROVEN_FOR_MS]);
      const fromFloors = await pages([[BIG, SMALL], [at, '0'], [seq, '0'], '0', [], WAITING_LEASES, PROVEN_FOR_MS]);
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
  const db = deliveryDatabase(async (queue) => {
    await addCallbacks(queue, BIG, 20, '1 hour');
    await queue.query(
      `UPDATE callbacks SET status = 'sending', lease_until = now() + interval '1 minute' WHERE seq IN (SELECT seq FROM callbacks ORDER BY seq LIMIT 5)`,
    );
    await queue.query(`INSERT INTO delivery_workers VALUES ('w', 200, now() + interval '1 hour')`);
    await queue.query('ANALYZE');
  });

  it('keeps no plan that reads the callbacks table whole', async () => {
    const { queue, relay } = db;
    const small = await statements(queue, relay);
    // Each run once as the code runs it, prepared, with its generic plan (made now, on the small tables).
    for (const [i, s] of small.entries()) {
      await s.on.query('SET plan_cache_mode = force_generic_plan');
      await s.on.query(`PREPARE cached${i} AS ${s.text}`);
      await rolledBack(s, () =>
        s.on.query(`EXECUTE cached${i}${s.params.length ? `(${s.params.map(literal).join(', ')})` : ''}`),
      );
    }
    // The backlog arrives: no ANALYZE, no VACUUM (autovacuum off).
    await addCallbacks(queue, BIG, BACKLOG, '1 day');
    await addCallbacks(queue, SMALL, 200, '1 hour');
    await queue.query(
      `UPDATE callbacks SET status = 'sending', lease_until = now() - interval '1 second' WHERE seq IN (SELECT seq FROM callbacks WHERE status = 'pending' ORDER BY seq DESC LIMIT 40)`,
    );
    const found: string[] = [];
    for (const [i, s] of (await statements(queue, relay)).entries()) {
      const { rows } = await rolledBack(s, () =>
        s.on.query(
          `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE cached${i}${s.params.length ? `(${s.params.map(literal).join(', ')})` : ''}`,
        ),
      );
      const plan = (rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0].Plan;
      for (const scan of scansOf(plan, SCANNED))
        if (scan.type === 'Seq Scan' || scan.examined > EXAMINED_MAX)
          found.push(
            `${s.name}: ${scan.type} on ${scan.relation}${scan.index ? ` using ${scan.index} (${scan.cond})` : ''}, ${scan.examined} rows examined`,
          );
    }
    expect(found).toEqual([]);
  }, 60_000);
});
