import type { PoolClient } from 'pg';
import { Company } from '../src/funding/domain/company.entity.js';
import { CallbackInserts } from '../src/callbacks/store/recording.js';
import { OneRowRepository } from '../src/funding/domain/one-row.repository.js';
import { AuditLog } from '../src/operators/audit/audit-log.js';
import { AuditEntryRepository } from '../src/operators/audit/audit-entry.repository.js';
import { literal, PlanNode, scansOf } from './support/plans.js';
import { scratchDatabase, ScratchDatabase, seedCompany } from './support/scratch-database.js';

/** Companies when the statements are first planned, and once the partners' companies have arrived. */
const FEW = 64;
const MANY = 30_000;
const COMPANIES = new Set(['companies']);

/**
 * The one-row writes (an operator's credit change: OneRowBatches, OneRowRepository's statements, as
 * snapshotted in src/funding/domain/queries/) are prepared by name on SqlPool's
 * connections and keep the generic plan they got on a table of a few companies. Once the table holds
 * many (no ANALYZE: a deployment without autovacuum), each run must still read only the companies
 * it changes, by their primary key, not the whole table.
 */
describe('one-row writes planned while the companies were few, run once many arrived', () => {
  let s: ScratchDatabase;
  let conn: PoolClient;

  beforeAll(async () => {
    s = await scratchDatabase();
    const { partnerId } = await seedCompany(s.pool);
    await s.pool.query(
      `INSERT INTO companies (partner_id, name, currency, credit_status) SELECT $1, 'C' || g, 'EUR', 'active' FROM generate_series(2, $2::int) g`,
      [partnerId, FEW],
    );
    await s.pool.query('ANALYZE');
    conn = await s.sql.pool.connect();
  }, 60_000);

  afterAll(async () => {
    conn?.release();
    await s?.close();
  });

  /** Each statement's arguments for one company: written over a version it does not have, so nothing is written, but its row is locked and read. */
  function argsFor(text: string, id: string): string {
    const count = Math.max(...[...text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
    const args = Array.from({ length: count }, (_, i) =>
      count === 1 ? [id] : i === 0 ? JSON.stringify([{ id }]) : i === 1 ? ['1'] : [],
    );
    return `(${args.map(literal).join(', ')})`;
  }

  it('keeps no plan that reads the companies table whole', async () => {
    const rows = new OneRowRepository(s.db, s.sql, new CallbackInserts(), new AuditLog(new AuditEntryRepository(s.db)));
    const statements = rows.statements(s.db.getMetadata(Company));
    const id = async () =>
      (await conn.query<{ id: string }>('SELECT id FROM companies ORDER BY random() LIMIT 1')).rows[0].id;
    await conn.query('SET plan_cache_mode = force_generic_plan');
    for (const [i, sql] of statements.entries()) {
      await conn.query(`PREPARE cached${i} AS ${sql.text}`);
      await conn.query('BEGIN');
      await conn.query(`EXECUTE cached${i}${argsFor(sql.text, await id())}`);
      await conn.query('ROLLBACK');
    }
    // The companies arrive: no ANALYZE, no VACUUM.
    const [{ partner_id }] = (await conn.query<{ partner_id: string }>('SELECT partner_id FROM companies LIMIT 1'))
      .rows;
    await conn.query(
      `INSERT INTO companies (partner_id, name, currency, credit_status) SELECT $1, 'D' || g, 'EUR', 'active' FROM generate_series(1, $2::int) g`,
      [partner_id, MANY],
    );
    const found: string[] = [];
    for (const [i, sql] of statements.entries()) {
      await conn.query('BEGIN');
      try {
        const { rows } = await conn.query(
          `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE cached${i}${argsFor(sql.text, await id())}`,
        );
        const plan = (rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0].Plan;
        const scans = scansOf(plan, COMPANIES);
        if (scans.length === 0) found.push(`${sql.name}: reads no company`);
        for (const scan of scans)
          if (scan.type === 'Seq Scan' || scan.examined > 2)
            found.push(
              `${sql.name}: ${scan.type} on companies${scan.index ? ` using ${scan.index}` : ''}, ${scan.examined} rows examined`,
            );
      } finally {
        await conn.query('ROLLBACK');
      }
    }
    expect(found).toEqual([]);
  }, 60_000);
});
