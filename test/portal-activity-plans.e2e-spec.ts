import { storeStatement } from '../src/callbacks/store/statements.js';
import { literal, PlanNode, scansOf } from './support/plans.js';
import { deliveryDatabase } from './support/delivery-statements.js';

/** Attempts on record, over PARTNERS partners, started over the last two days. */
const ATTEMPTS = 1_000_000;
const PARTNERS = 100;
const CALLBACKS_PER_PARTNER = 1_000;
const ATTEMPTS_PER_CALLBACK = ATTEMPTS / PARTNERS / CALLBACKS_PER_PARTNER;
/** The partner whose overview is read (delivery-statements' own, partner 1). */
const PARTNER = '00000000-0000-0000-0000-000000000001';

/**
 * The portal overview's chart (src/callbacks/store/portal-activity.ts) costs O(this partner's
 * attempts of the last 24 hours), whatever the other partners' traffic: on a table of ATTEMPTS
 * attempts spread evenly over PARTNERS partners and two days, analysed, its plan (as SqlPool's
 * connections run it: PLANNER_SETTINGS; custom and generic) reads one range of
 * `callback_attempts_partner_started_idx` holding exactly the partner's attempts of the window,
 * and each of their callbacks by its primary key (once per attempt, or once per callback when the
 * planner memoizes the lookup); nothing else of either table.
 */
describe(`the portal overview's chart over ${ATTEMPTS.toLocaleString('en')} attempts of ${PARTNERS} partners`, () => {
  const db = deliveryDatabase(async (queue) => {
    // Partner 1 and its company are the database's; 99 more, each with a company.
    await queue.query(
      `INSERT INTO partners (id, name, api_key_hash, signing_secret)
       SELECT ('00000000-0000-0000-0001-' || lpad(g::text, 12, '0'))::uuid, 'p' || g, md5(g::text), 's' FROM generate_series(2, $1::int) g`,
      [PARTNERS],
    );
    await queue.query(
      `INSERT INTO companies (partner_id, name, currency, credit_status) SELECT id, 'c', 'EUR', 'active' FROM partners WHERE id <> $1`,
      [PARTNER],
    );
    // Each partner's callbacks, a tenth failed, the rest delivered.
    await queue.query(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at, delivered_at, attempt_count)
       SELECT c.partner_id, c.id, 0, 'http://127.0.0.1:1/cb', '{}', CASE WHEN g % 10 = 0 THEN 'failed' ELSE 'delivered' END, NULL, now(), $2
         FROM companies c, generate_series(1, $1::int) g`,
      [CALLBACKS_PER_PARTNER, ATTEMPTS_PER_CALLBACK],
    );
    // Their attempts, started evenly over the last 48 hours: about half of them in the chart's window.
    await queue.query(
      `INSERT INTO callback_attempts (callback_id, partner_id, number, started_at, duration_ms, status_code)
       SELECT c.id, c.partner_id, n, now() - random() * interval '48 hours', 5, CASE WHEN n = $1 AND c.status = 'delivered' THEN 204 ELSE 503 END
         FROM callbacks c, generate_series(1, $1::int) n`,
      [ATTEMPTS_PER_CALLBACK],
    );
    await queue.query('ANALYZE');
  }, 180_000);

  it(`holds ${ATTEMPTS.toLocaleString('en')} attempts over ${PARTNERS} partners`, async () => {
    const [{ attempts, partners }] = (
      await db.queue.query(
        'SELECT count(*)::int AS attempts, count(DISTINCT partner_id)::int AS partners FROM callback_attempts',
      )
    ).rows;
    expect([attempts, partners]).toEqual([ATTEMPTS, PARTNERS]);
  });

  for (const mode of ['force_custom_plan', 'force_generic_plan']) {
    it(`reads only the partner's attempts of the window, by one index range, and their callbacks by key (${mode})`, async () => {
      const { queue } = db;
      let plan: PlanNode;
      let inWindow: number;
      let callbacksInWindow: number;
      // In one transaction: the count and the statement see the same now(), so the same window.
      await queue.query('BEGIN');
      try {
        ({ n: inWindow, callbacks: callbacksInWindow } = (
          await queue.query(
            `SELECT count(*)::int AS n, count(DISTINCT callback_id)::int AS callbacks FROM callback_attempts
              WHERE partner_id = $1 AND started_at >= date_trunc('hour', now()) - interval '23 hours'`,
            [PARTNER],
          )
        ).rows[0]);
        await queue.query(`SET LOCAL plan_cache_mode = ${mode}`);
        await queue.query(`PREPARE activity(uuid) AS ${storeStatement('partner-activity').text}`);
        const { rows } = await queue.query(
          `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE activity(${literal(PARTNER)})`,
        );
        plan = (rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0].Plan;
      } finally {
        await queue.query('ROLLBACK');
        await queue.query('DEALLOCATE ALL');
      }
      const scans = scansOf(plan, new Set(['callback_attempts', 'callbacks']));
      expect(scans.map((x) => `${x.relation} ${x.type} ${x.index}`).sort()).toEqual([
        'callback_attempts Index Scan callback_attempts_partner_started_idx',
        'callbacks Index Scan callbacks_pkey',
      ]);
      const attempts = scans.find((x) => x.relation === 'callback_attempts')!;
      // The range is the partner's and the window's both: every entry read is one of the partner's attempts of the window.
      expect(attempts.cond).toMatch(/partner_id = .*started_at >= /);
      expect(inWindow).toBeGreaterThan(ATTEMPTS / PARTNERS / 3);
      expect(attempts.examined).toBe(inWindow);
      // Each attempt's callback by key: once per attempt, or once per callback where the plan memoizes the lookup (attempts of one callback share it).
      const callbacks = scans.find((x) => x.relation === 'callbacks')!.examined;
      expect(callbacks).toBeGreaterThanOrEqual(callbacksInWindow);
      expect(callbacks).toBeLessThanOrEqual(inWindow);
    });
  }
});
