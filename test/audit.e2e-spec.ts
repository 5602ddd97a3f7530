import request from 'supertest';
import { createPartner, harness, Partner, TestApp } from './support/harness.js';

/**
 * The audit log's atomicity: an entry for every committed change under /admin and for nothing
 * else, whatever refuses or fails the change, and however many changes run at once.
 */
let t: TestApp;
let p: Partner;
let operator: { id: string; name: string; token: string };
const e2e = harness({}, { partner: 'Audit Bank' });
beforeAll(async () => {
  ({ t, p } = e2e);
  operator = (await t.admin('post', '/admin/v1/operators', { name: 'olga', role: 'operator' }).expect(201)).body;
  // The injected failure: a deferred constraint trigger raising at commit, after the change and
  // its entry are written, for the targets listed in audit_fail.
  await t.sql(`CREATE TABLE audit_fail (target_id text PRIMARY KEY)`);
  await t.sql(`CREATE FUNCTION audit_fail() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM audit_fail WHERE target_id = NEW.target_id) THEN RAISE EXCEPTION 'injected failure at commit'; END IF;
      RETURN NULL;
    END $$`);
  await t.sql(
    `CREATE CONSTRAINT TRIGGER audit_fail AFTER INSERT ON audit_entries DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit_fail()`,
  );
});

const as = (method: 'get' | 'post' | 'patch', path: string, body?: object) => t.as(operator.token, method, path, body);
/** Unchecked against the document: the injected failure answers an undocumented 500. */
const raw = (method: 'post' | 'patch', path: string, body?: object) =>
  request(t.app.getHttpServer())
    [method](path)
    .set('Authorization', `Bearer ${operator.token}`)
    .send(body ?? {});

const entries = (targetId: string) =>
  t.sql<{ action: string; operator_id: string; before: Record<string, unknown>; after: Record<string, unknown> }>(
    'SELECT action, operator_id, before, after FROM audit_entries WHERE target_id = $1 ORDER BY seq',
    [targetId],
  );

async function company(name = 'Audited Co'): Promise<string> {
  return (await t.as(p.apiKey, 'post', '/v1/companies', { name, status_callback: 'http://127.0.0.1:9/cb' }).expect(201))
    .body.id;
}

describe('company.credit.update', () => {
  it('writes one entry with the operator and the credit properties that changed, before and after', async () => {
    const c = await company();
    await as('patch', `/admin/v1/companies/${c}/credit`, { creditLimit: '5000', repaymentTermDays: 45 }).expect(200);
    expect(await entries(c)).toEqual([
      {
        action: 'company.credit.update',
        operator_id: operator.id,
        before: { creditLimit: '0.00', repaymentTermDays: 30 },
        after: { creditLimit: '5000.00', repaymentTermDays: 45 },
      },
    ]);
    const listed = (await as('get', `/admin/v1/audit?targetType=company&targetId=${c}`).expect(200)).body.items;
    expect(listed).toEqual([
      expect.objectContaining({
        operator: { id: operator.id, name: 'olga' },
        action: 'company.credit.update',
        targetType: 'company',
        targetId: c,
      }),
    ]);
  });

  it('a refused change (409, 404, 400) writes none', async () => {
    const c = await company();
    await as('patch', `/admin/v1/companies/${c}/credit`, { creditStatus: 'closed' }).expect(200);
    await as('patch', `/admin/v1/companies/${c}/credit`, { creditStatus: 'active' }).expect(409);
    const d = await company();
    await as('patch', `/admin/v1/companies/${d}/credit`, { creditLimit: '-1' }).expect(400);
    await as('patch', `/admin/v1/companies/00000000-0000-4000-8000-000000000000/credit`, {
      repaymentTermDays: 10,
    }).expect(404);
    expect((await entries(c)).map((e) => e.after)).toEqual([{ creditStatus: 'closed' }]);
    expect(await entries(d)).toEqual([]);
  });

  it('a change whose transaction fails after its entry is written leaves neither the change, its callbacks nor the entry', async () => {
    const c = await company();
    await t.sql('INSERT INTO audit_fail VALUES ($1)', [c]);
    await raw('patch', `/admin/v1/companies/${c}/credit`, { creditLimit: '700' }).expect(500);
    await t.sql('DELETE FROM audit_fail WHERE target_id = $1', [c]);
    expect(await entries(c)).toEqual([]);
    expect(
      (await t.sql<{ credit_limit: string }>('SELECT credit_limit FROM companies WHERE id = $1', [c]))[0].credit_limit,
    ).toBe('0.00');
    expect(await t.sql('SELECT 1 FROM callbacks WHERE company_id = $1', [c])).toEqual([]);
    await as('patch', `/admin/v1/companies/${c}/credit`, { creditLimit: '700' }).expect(200);
    expect((await entries(c)).map((e) => e.after)).toEqual([{ creditLimit: '700.00' }]);
  });

  it('concurrent changes and refusals: the entries are exactly the committed changes', async () => {
    const c = await company();
    await as('patch', `/admin/v1/companies/${c}/credit`, { creditLimit: '1000', creditStatus: 'active' }).expect(200);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        i % 4 === 3
          ? as('patch', `/admin/v1/companies/${c}/credit`, { creditStatus: 'pending' }) // active → pending is refused
          : as('patch', `/admin/v1/companies/${c}/credit`, { repaymentTermDays: 100 + i }),
      ),
    );
    const committed = answers.flatMap((r, i) => (r.status === 200 ? [100 + i] : []));
    expect(answers.map((r) => r.status)).toEqual(answers.map((_, i) => (i % 4 === 3 ? 409 : 200)));
    // One entry per committed change, each with the term that change set, none for a refusal.
    const written = (await entries(c)).slice(1);
    expect(written.map((e) => e.after.repaymentTermDays).sort()).toEqual(committed.sort());
  });
});

describe('limit requests, withdrawals and loans', () => {
  const entriesOf = async (id: string) =>
    (await entries(id)).map(({ action, before, after }) => ({ action, before, after }));

  it('approve, accept, pay out and a payment each write one entry of what they changed; their refusals (409, 422) none', async () => {
    const c = await company();
    const lr = (await t.as(p.apiKey, 'post', `/v1/companies/${c}/limit-requests`, { amount: '1000' }).expect(201)).body
      .id;
    await as('post', `/admin/v1/limit-requests/${lr}/approve`).expect(200);
    await as('post', `/admin/v1/limit-requests/${lr}/approve`).expect(409);
    await as('post', `/admin/v1/limit-requests/${lr}/reject`).expect(409);
    expect(await entriesOf(lr)).toEqual([
      {
        action: 'limit-request.approve',
        before: { status: 'pending', company: { creditLimit: '0.00', creditStatus: 'pending' } },
        after: { status: 'approved', company: { creditLimit: '1000.00', creditStatus: 'active' } },
      },
    ]);

    const big = (await t.as(p.apiKey, 'post', `/v1/companies/${c}/withdrawal`, { amount: '900' }).expect(201)).body.id;
    const w = (await t.as(p.apiKey, 'post', `/v1/companies/${c}/withdrawal`, { amount: '600' }).expect(201)).body.id;
    await as('post', `/admin/v1/withdrawal-requests/${big}/accept`).expect(200);
    await as('post', `/admin/v1/withdrawal-requests/${big}/pay-out`).expect(200);
    await as('post', `/admin/v1/withdrawal-requests/${w}/accept`).expect(422); // 600 > the 100 left
    const loanId = (await t.sql<{ loan_id: string }>('SELECT loan_id FROM withdrawal_requests WHERE id = $1', [big]))[0]
      .loan_id;
    expect(await entriesOf(big)).toEqual([
      { action: 'withdrawal-request.accept', before: { status: 'created' }, after: { status: 'accepted' } },
      {
        action: 'withdrawal-request.pay-out',
        before: { status: 'accepted', loanId: null, company: { borrowedAmount: '0.00' } },
        after: { status: 'paid_out', loanId, company: { borrowedAmount: '900.00' } },
      },
    ]);
    expect(await entriesOf(w)).toEqual([]);

    await as('post', `/admin/v1/loans/${loanId}/payments`, { amount: '901' }).expect(422);
    await as('post', `/admin/v1/loans/${loanId}/payments`, { amount: '900' }).expect(201);
    expect(await entriesOf(loanId)).toEqual([
      {
        action: 'loan.payment.register',
        before: {
          outstanding: '900.00',
          status: 'active',
          company: { borrowedAmount: '900.00' },
          withdrawalRequest: { status: 'paid_out' },
        },
        after: {
          outstanding: '0.00',
          status: 'repaid',
          company: { borrowedAmount: '0.00' },
          withdrawalRequest: { status: 'repaid' },
        },
      },
    ]);
  });

  it('an approval whose transaction fails after its entry is written leaves neither the approval, its callbacks nor the entry', async () => {
    const c = await company();
    const lr = (
      await t
        .as(p.apiKey, 'post', `/v1/companies/${c}/limit-requests`, {
          amount: '1000',
          status_callback: 'http://127.0.0.1:9/lr',
        })
        .expect(201)
    ).body.id;
    await t.sql('INSERT INTO audit_fail VALUES ($1)', [lr]);
    await raw('post', `/admin/v1/limit-requests/${lr}/approve`).expect(500);
    await t.sql('DELETE FROM audit_fail WHERE target_id = $1', [lr]);
    expect(await entries(lr)).toEqual([]);
    expect((await t.sql<{ status: string }>('SELECT status FROM limit_requests WHERE id = $1', [lr]))[0].status).toBe(
      'pending',
    );
    expect(
      (await t.sql<{ credit_limit: string }>('SELECT credit_limit FROM companies WHERE id = $1', [c]))[0].credit_limit,
    ).toBe('0.00');
    expect(await t.sql('SELECT 1 FROM callbacks WHERE company_id = $1', [c])).toEqual([]);
    await as('post', `/admin/v1/limit-requests/${lr}/approve`).expect(200);
    expect((await entries(lr)).map((e) => e.action)).toEqual(['limit-request.approve']);
  });

  it('concurrent approvals and rejections of one request: one commits, with its one entry', async () => {
    const c = await company();
    const lr = (await t.as(p.apiKey, 'post', `/v1/companies/${c}/limit-requests`, { amount: '1000' }).expect(201)).body
      .id;
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        as('post', `/admin/v1/limit-requests/${lr}/${i % 2 ? 'reject' : 'approve'}`),
      ),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([200, ...Array(11).fill(409)]);
    const won = answers.find((r) => r.status === 200)!.body.status;
    expect((await entries(lr)).map((e) => e.after.status)).toEqual([won]);
  });
});

describe('callbacks and destinations', () => {
  it('a redelivery, a bulk redelivery and a probe each write one entry; a refused one (404, 409) none', async () => {
    const c = await company();
    const [{ id: cb }] = await t.sql<{ id: string }>(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, last_error) VALUES ($1, $2, 0, 'http://127.0.0.1:7/audit', '{}', 'failed', 'HTTP 410') RETURNING id`,
      [p.id, c],
    );
    await as('post', `/admin/v1/callbacks/00000000-0000-4000-8000-000000000000/redeliver`).expect(404);
    await as('post', `/admin/v1/callbacks/${cb}/redeliver`).expect(202);
    expect(await entries(cb)).toEqual([
      {
        action: 'callback.redeliver',
        operator_id: operator.id,
        before: { status: 'failed', nextAttemptAt: null },
        after: { status: 'pending', nextAttemptAt: expect.any(String) },
      },
    ]);
    const bulk = (await as('post', '/admin/v1/callbacks/redeliver', { status: 'failed', companyId: c }).expect(202))
      .body.count;
    const [last] = await t.sql<{ action: string; target_id: string | null; after: object }>(
      `SELECT action, target_id, after FROM audit_entries WHERE operator_id = $1 ORDER BY seq DESC LIMIT 1`,
      [operator.id],
    );
    expect(last).toEqual({
      action: 'callback.redeliver-failed',
      target_id: null,
      after: {
        status: 'pending',
        count: bulk,
        since: null,
        until: null,
        partnerId: null,
        companyId: c,
        destination: null,
      },
    });

    // The callback's own destination, closed (its redeliveries may have failed meanwhile). Each
    // write bumps the version, so a settlement still in flight folds over it instead of writing
    // the state it read before.
    const origin = 'http://127.0.0.1:7';
    await t.sql(
      `UPDATE destinations SET opened_at = NULL, next_probe_at = NULL, failures = 0, version = version + 1 WHERE origin = $1`,
      [origin],
    );
    await as('post', '/admin/v1/destinations/probe', { origin }).expect(409); // closed: nothing to probe
    await as('post', '/admin/v1/destinations/probe', { origin: 'http://127.0.0.1:8' }).expect(404);
    // The entry names the destination probed: the partner's key at the origin, not the origin every partner there shares.
    const [{ key }] = await t.sql<{ key: string }>(`SELECT key FROM destinations WHERE origin = $1`, [origin]);
    expect(key).toMatch(/^[0-9a-f-]{36} http:\/\/127\.0\.0\.1:7$/);
    expect(await entries(key)).toEqual([]);
    await t.sql(
      `UPDATE destinations SET opened_at = now(), next_probe_at = now() + interval '1 hour', version = version + 1 WHERE origin = $1`,
      [origin],
    );
    await as('post', '/admin/v1/destinations/probe', { origin: 'HTTP://127.0.0.1:7' }).expect(202); // the origin as written, normalised
    expect(await entries(origin)).toEqual([]);
    expect(await entries(key)).toEqual([
      {
        action: 'destination.probe',
        operator_id: operator.id,
        before: { nextProbeAt: expect.any(String) },
        after: { nextProbeAt: expect.any(String) },
      },
    ]);
  });
});

describe('partner changes', () => {
  it('a replayed partner creation (the same Idempotency-Key) writes no second entry', async () => {
    const create = () =>
      t
        .admin('post', '/admin/v1/partners', { name: 'Replayed Bank' })
        .set('Idempotency-Key', 'audit-replay-1')
        .expect(201);
    const first = (await create()).body.id as string;
    expect((await create()).headers['idempotent-replayed']).toBe('true');
    expect((await entries(first)).map((e) => e.action)).toEqual(['partner.create']);
  });

  it("an Idempotency-Key is one operator's own: another operator's same key creates its own partner", async () => {
    const other = (await t.admin('post', '/admin/v1/operators', { name: 'otto', role: 'admin' }).expect(201)).body
      .token as string;
    const mine = (
      await t
        .admin('post', '/admin/v1/partners', { name: 'Keyed Bank' })
        .set('Idempotency-Key', 'shared-key-1')
        .expect(201)
    ).body;
    const theirs = await t
      .as(other, 'post', '/admin/v1/partners', { name: 'Keyed Bank' })
      .set('Idempotency-Key', 'shared-key-1')
      .expect(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.body.id).not.toBe(mine.id);
    expect(theirs.body.apiKey).not.toBe(mine.apiKey);
  });

  it('a rotation whose transaction fails after its entry is written rotates nothing', async () => {
    const q = await createPartner(t, 'Failing rotation');
    await t.sql('INSERT INTO audit_fail VALUES ($1)', [q.id]);
    await request(t.app.getHttpServer())
      .post(`/admin/v1/partners/${q.id}/rotate-api-key`)
      .set('Authorization', `Bearer ${t.config.adminToken}`)
      .send({ previousKeyValidHours: 0 })
      .expect(500);
    await t.sql('DELETE FROM audit_fail WHERE target_id = $1', [q.id]);
    await t.as(q.apiKey, 'post', '/v1/companies', { name: 'still works' }).expect(201);
    expect((await entries(q.id)).map((e) => e.action)).toEqual(['partner.create']);
  });
});
