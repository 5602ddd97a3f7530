import { Client } from 'pg';
import { CallbackMessage } from '../src/callbacks/callback-message.js';
import { DomainTransitions } from '../src/funding/domain/domain-transitions.js';
import { CallbackEvent } from '../src/callbacks/callback-recorder.js';
import { Company } from '../src/funding/domain/company.entity.js';
import { sqlSnapshots } from '../src/funding/domain/snapshots.js';
import { SqlPool } from '../src/platform/database/sql-pool.js';
import { Receiver } from './support/receiver.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { companyWithCallback, createPartner, harness, Partner, TestApp, until } from './support/harness.js';
import { runIdentity } from './support/run-identity.js';

/**
 * Waits until another backend waits for a lock `holder` holds. `holder` is inside its transaction,
 * which reads pg_stat_activity once and keeps that snapshot: each look clears it first.
 */
async function untilWaitingOn(holder: Client, what: string): Promise<void> {
  const [{ pid }] = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
  await until(
    async () => {
      await holder.query('SELECT pg_stat_clear_snapshot()');
      return (
        (await holder.query('SELECT 1 FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))', [pid]))
          .rowCount === 1
      );
    },
    { what },
  );
}

/** A change of a company's own row (DomainTransitions.changeCompany): read unlocked, written only over the version read, with its callbacks in the same statement. */
describe('one-row changes', () => {
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;

  const e2e = harness();
  beforeAll(() => ({ t, p, rx } = e2e));

  const eventOf = (company: Company, partnerId = company.partnerId): CallbackEvent => ({
    message: CallbackMessage.CreditLimitUpdated,
    url: company.callbackUrl,
    partnerId,
    ids: { withdrawalId: null, companyId: company.id, limitRequestId: null, loanId: null },
  });
  const callbacksOf = async (c: string) =>
    (await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM callbacks WHERE company_id = $1', [c]))[0].n;
  const daysOf = async (c: string) =>
    (await t.sql<{ d: number }>('SELECT repayment_term_days AS d FROM companies WHERE id = $1', [c]))[0].d;
  /** A change of the company's repayment term: its one callback (0), and one of another partner's first when `partnerId` is named. */
  const setDays = (c: string, days: number, partnerId?: string) =>
    t.app.get(DomainTransitions).changeCompany({
      id: c,
      effects: (company) => {
        company.repaymentTermDays = days;
        return partnerId ? [eventOf(company, partnerId)] : [];
      },
    });

  it('decides again over a row another transaction changed between its read and its write, and records its callbacks once', async () => {
    const { c } = await companyWithCallback(t, p, rx.url('/race'));
    const other = new Client({ connectionString: t.config.databaseUrl });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query(`UPDATE companies SET name = 'renamed meanwhile' WHERE id = $1`, [c]);
      const seen: string[] = [];
      const change = t.app.get(DomainTransitions).changeCompany({
        id: c,
        effects: (company) => {
          seen.push(company.name);
          company.repaymentTermDays = 90;
        },
      });
      // The read does not wait for the row lock; the write does, until the other transaction ends.
      await untilWaitingOn(other, 'the write waiting on the row lock');
      await other.query('COMMIT');
      const written = await change;
      expect(seen).toEqual(['F', 'renamed meanwhile']);
      expect(written.name).toBe('renamed meanwhile');
    } finally {
      await other.end();
    }
    const [row] = await t.sql<{ name: string; repayment_term_days: number }>(
      'SELECT name, repayment_term_days FROM companies WHERE id = $1',
      [c],
    );
    expect(row).toEqual({ name: 'renamed meanwhile', repayment_term_days: 90 });
    expect(await callbacksOf(c)).toBe(1);
  });

  it('writes other rows while one change waits for a lock another transaction holds on its row', async () => {
    const [held, free] = await Promise.all([
      companyWithCallback(t, p, rx.url('/held')),
      companyWithCallback(t, p, rx.url('/free')),
    ]);
    const other = new Client({ connectionString: t.config.databaseUrl });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT 1 FROM companies WHERE id = $1 FOR UPDATE', [held.c]);
      const waiting = setDays(held.c, 71);
      await untilWaitingOn(other, 'the change of the held row waiting on its lock');
      // Written while the held row's change still waits (were it in the same statement, this would wait too).
      const behind = new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error("the free row's change waited behind the held row's lock")), 5000).unref(),
      );
      expect((await Promise.race([setDays(free.c, 72), behind])).repaymentTermDays).toBe(72);
      await other.query('COMMIT');
      expect((await waiting).repaymentTermDays).toBe(71);
    } finally {
      await other.end();
    }
    expect([await callbacksOf(held.c), await callbacksOf(free.c)]).toEqual([1, 1]);
  });

  it('writes neither the row nor any callback when a callback cannot be written', async () => {
    const { c } = await companyWithCallback(t, p, rx.url('/atomic'));
    const unknownPartner = '00000000-0000-4000-8000-000000000000';
    const change = setDays(c, 77, unknownPartner);
    await expect(change).rejects.toThrow(/callbacks_partner_id_fkey/);
    expect(await daysOf(c)).toBe(30);
    expect(await callbacksOf(c)).toBe(0);
  });

  it('writes nothing when the decision refuses the change', async () => {
    const { c } = await companyWithCallback(t, p, rx.url('/refused'));
    await t.admin('patch', `/admin/v1/companies/${c}/credit`, { creditStatus: 'closed' }).expect(200);
    await t
      .admin('patch', `/admin/v1/companies/${c}/credit`, { creditStatus: 'active', creditLimit: '10' })
      .expect(409);
    const [row] = await t.sql<{ credit_status: string; credit_limit: string }>(
      'SELECT credit_status, credit_limit FROM companies WHERE id = $1',
      [c],
    );
    expect(row).toEqual({ credit_status: 'closed', credit_limit: '0.00' });
    expect(await callbacksOf(c)).toBe(1);
  });

  it('reads and writes the changes of requests under way together: two statements for twenty companies', async () => {
    const companies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => companyWithCallback(t, p, rx.url(`/together/${i}`))),
    );
    const pool = t.app.get(SqlPool).pool;
    const query = jest.spyOn(pool, 'query');
    try {
      const written = await Promise.all(companies.map(({ c }, i) => setDays(c, 100 + i)));
      expect(written.map((w) => w.repaymentTermDays)).toEqual(companies.map((_, i) => 100 + i));
      // The pool also carries the deliveries' loads and settlements: the row writes' statements are these.
      const sent = query.mock.calls.map(([q]) => q as unknown as { name?: string; text: string });
      const rowStatements = sent.filter((q) => q.name?.startsWith('row-'));
      expect(rowStatements.map((q) => q.name)).toEqual(['row-read-companies', 'row-write-companies-together']);
      // As snapshotted (built without the app's data source): src/funding/domain/queries/.
      const snapshot = (await sqlSnapshots()).get('one-row-writes.sql')!;
      for (const q of rowStatements) expect(snapshot).toContain(`-- ${q.name} (on sql-pool)\n${q.text.trim()};\n`);
    } finally {
      query.mockRestore();
    }
    for (const [i, { c }] of companies.entries()) expect([await daysOf(c), await callbacksOf(c)]).toEqual([100 + i, 1]);
  });

  it('loses no change of a row changed many times at once (each is decided over the one before it)', async () => {
    const { c } = await companyWithCallback(t, p, rx.url('/increments'));
    const seen = await Promise.all(
      Array.from({ length: 24 }, () =>
        t.app.get(DomainTransitions).changeCompany({
          id: c,
          effects: (company) => {
            company.repaymentTermDays += 1;
          },
        }),
      ),
    );
    expect(seen.map((s) => s.repaymentTermDays).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 24 }, (_, i) => 31 + i),
    );
    expect([await daysOf(c), await callbacksOf(c)]).toEqual([54, 24]);
  });

  it('fails only the change PostgreSQL refuses when it was written together with others', async () => {
    const companies = await Promise.all(
      Array.from({ length: 5 }, (_, i) => companyWithCallback(t, p, rx.url(`/refused-one/${i}`))),
    );
    const unknownPartner = '00000000-0000-4000-8000-000000000000';
    const outcomes = await Promise.allSettled(
      companies.map(({ c }, i) => setDays(c, 60 + i, i === 2 ? unknownPartner : undefined)),
    );
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(String((outcomes[2] as PromiseRejectedResult).reason)).toMatch(/callbacks_partner_id_fkey/);
    for (const [i, { c }] of companies.entries())
      expect([await daysOf(c), await callbacksOf(c)]).toEqual(i === 2 ? [30, 0] : [60 + i, 1]);
  });

  it('answers 409 and writes nothing when every one of its reads is overtaken', async () => {
    const { c } = await companyWithCallback(t, p, rx.url('/overtaken'));
    // A trigger that skips this company's updates makes each write find its version gone, as if
    // another request changed the row every time in between.
    await t.sql(`CREATE FUNCTION skip_update() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`);
    await t.sql(
      `CREATE TRIGGER skip_update BEFORE UPDATE ON companies FOR EACH ROW WHEN (OLD.id = '${c}') EXECUTE FUNCTION skip_update()`,
    );
    try {
      const res = await t.admin('patch', `/admin/v1/companies/${c}/credit`, { creditLimit: '10' }).expect(409);
      expect(res.body.message).toBe(
        "Company was changed by another request after each of this change's 50 reads; nothing was written, try again",
      );
    } finally {
      await t.sql('DROP TRIGGER skip_update ON companies');
      await t.sql('DROP FUNCTION skip_update()');
    }
    const [row] = await t.sql<{ credit_limit: string }>('SELECT credit_limit FROM companies WHERE id = $1', [c]);
    expect(row.credit_limit).toBe('0.00');
    expect(await callbacksOf(c)).toBe(0);
  });

  it('applies concurrent changes of one company one after another: none lost, one callback pair each', async () => {
    const { c } = await companyWithCallback(t, p, rx.url('/concurrent'));
    const limits = Array.from({ length: 24 }, (_, i) => String(100 + i));
    const answers = await Promise.all(
      limits.map((creditLimit) => t.admin('patch', `/admin/v1/companies/${c}/credit`, { creditLimit })),
    );
    expect(answers.map((a) => a.status)).toEqual(limits.map(() => 200));
    // Every change raised or lowered the limit from the one before it: limit and balance callbacks, each.
    expect(await callbacksOf(c)).toBe(2 * limits.length);
    const [row] = await t.sql<{ credit_limit: string }>('SELECT credit_limit FROM companies WHERE id = $1', [c]);
    expect(limits.map((l) => `${l}.00`)).toContain(row.credit_limit);
    await until(
      async () =>
        (
          await t.sql<{ n: number }>(
            `SELECT count(*)::int AS n FROM callbacks WHERE company_id = $1 AND status = 'delivered'`,
            [c],
          )
        )[0].n === 48,
      {
        what: 'all delivered',
      },
    );
  });
});

describe('a one-row change whose connection is reset', () => {
  let t: TestApp;
  let proxy: TcpProxy;
  let rx: Receiver;
  let direct: string;

  let proxied: string;

  beforeAll(async () => {
    direct = runIdentity().databaseUrl;
    const url = new URL(direct);
    proxy = await TcpProxy.start(Number(url.port || 5432), url.hostname);
    url.port = String(proxy.port);
    proxied = url.toString();
  });
  // The proxy lets the app's connections through again before it closes, and goes after it.
  afterAll(() => proxy?.restore());
  const e2e = harness(() => ({ ROLE: 'api', DATABASE_URL: proxied }), { partner: null });
  beforeAll(() => ({ t, rx } = e2e));
  afterAll(() => proxy?.close());

  it('answers 503 with Retry-After while its write waits: the socket error of a raw query is an outage, not a fault', async () => {
    const p = await createPartner(t);
    const { c } = await companyWithCallback(t, p, rx.url('/reset'));
    const other = new Client({ connectionString: direct });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT 1 FROM companies WHERE id = $1 FOR UPDATE', [c]);
      const answer = t.admin('patch', `/admin/v1/companies/${c}/credit`, { creditLimit: '10' }).then((r) => r);
      await untilWaitingOn(other, 'the write waiting on the row lock');
      proxy.reset();
      const res = await answer;
      expect([res.status, res.headers['retry-after'], res.body.message]).toEqual([
        503,
        '2',
        'the database cannot be reached; retry later',
      ]);
    } finally {
      proxy.restore();
      await other.query('ROLLBACK');
      await other.end();
    }
  });
});
