import type { ClientBase } from 'pg';
import { addCallbacks, BIG, deliveryDatabase, rolledBack, SMALL, statements } from './support/delivery-statements.js';

const RUNS = 8;

/**
 * The statements of the delivery path run on the connections of hand-written SQL (SqlPool's, the
 * relay's), prepared by name, and are planned once per connection: every run takes the generic
 * plan (the one test/delivery-plans.e2e-spec.ts checks), none is planned for its values. The
 * tables are never analysed, as in a deployment without autovacuum: there PostgreSQL's own choice
 * planned settlement's record anew for every batch.
 */
describe('delivery statements are planned once per connection', () => {
  const db = deliveryDatabase(async (queue) => {
    await addCallbacks(queue, BIG, 2_000, '1 hour');
    await addCallbacks(queue, SMALL, 200, '1 hour');
    await queue.query(
      `UPDATE callbacks SET status = 'sending', lease_until = now() + interval '1 minute' WHERE seq IN (SELECT seq FROM callbacks ORDER BY seq LIMIT 20)`,
    );
    await queue.query(`INSERT INTO delivery_workers VALUES ('w', 200, now() + interval '1 hour')`);
  });

  it('runs each prepared statement with its generic plan from the first run on', async () => {
    const { queue, relay } = db;
    const all = await statements(queue, relay);
    // Each run rolled back: every one writes as the first did.
    for (const s of all)
      for (let i = 0; i < RUNS; i++)
        await rolledBack(s, () => s.on.query({ name: s.name, text: s.text, values: s.params }));
    const plans = async (conn: ClientBase) =>
      (
        await conn.query<{ name: string; generic_plans: string; custom_plans: string }>(
          `SELECT name, generic_plans::text, custom_plans::text FROM pg_prepared_statements WHERE NOT from_sql`,
        )
      ).rows;
    const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
    const found = [...(await plans(queue)), ...(await plans(relay))].sort(byName);
    expect(found).toEqual(
      all.map((s) => ({ name: s.name, generic_plans: String(RUNS), custom_plans: '0' })).sort(byName),
    );
  });
});
