import { SecretBox } from '../src/platform/crypto/secret-box.js';
import { createPartner, harness, Partner, TestApp } from './support/harness.js';

const NIL = '00000000-0000-4000-8000-000000000000';

interface Row {
  message: number;
  url: string;
  body: string;
}

describe.each(['A', 'B'] as const)('funding domain API, variant %s', (variant) => {
  const companyProp = variant === 'A' ? 'callback' : 'status_callback';
  const otherProp = variant === 'A' ? 'status_callback' : 'callback';
  const wPath = variant === 'A' ? 'withdrawal-requests' : 'withdrawal';
  const wrongWPath = variant === 'A' ? 'withdrawal' : 'withdrawal-requests';
  const COMPANY_URL = 'http://127.0.0.1:9/company';
  const LIMIT_URL = 'http://127.0.0.1:9/limit';
  const W_URL = 'http://127.0.0.1:9/withdrawal';
  const LOAN_URL = 'http://127.0.0.1:9/loan';

  let t: TestApp;
  let p: Partner;
  let other: Partner;

  // The API role only: records stay pending here; delivery has its own tests.
  const e2e = harness({ API_VARIANT: variant, ROLE: 'api' });
  beforeAll(async () => {
    ({ t, p } = e2e);
    other = await createPartner(t, 'Other Bank');
  });

  /** The callback records an action creates, in order. */
  async function recorded(action: () => Promise<unknown>): Promise<Row[]> {
    const [{ max }] = await t.sql<{ max: string }>('SELECT coalesce(max(seq), 0)::text AS max FROM callbacks');
    await action();
    return t.sql<Row>('SELECT message, url, body FROM callbacks WHERE seq > $1 ORDER BY seq', [max]);
  }

  const body = (message: number, ids: { w?: string | null; c: string; l?: string | null; loan?: string | null }) =>
    JSON.stringify({
      message,
      withdrawalId: ids.w ?? null,
      companyId: ids.c,
      limitRequestId: ids.l ?? null,
      loanId: ids.loan ?? null,
    });

  async function company(extra: object = { [companyProp]: COMPANY_URL }, key = p.apiKey): Promise<string> {
    const res = await t.as(key, 'post', '/v1/companies', { name: 'Acme Trading', ...extra }).expect(201);
    return res.body.id;
  }

  async function limitRequest(
    c: string,
    amount = '10000',
    extra: object = { status_callback: LIMIT_URL },
  ): Promise<string> {
    const res = await t.as(p.apiKey, 'post', `/v1/companies/${c}/limit-requests`, { amount, ...extra }).expect(201);
    return res.body.id;
  }

  /** A company with an active credit limit. */
  async function fundedCompany(limit = '10000', extra?: object): Promise<string> {
    const c = await company(extra);
    await t.admin('post', `/admin/v1/limit-requests/${await limitRequest(c, limit)}/approve`).expect(200);
    return c;
  }

  async function withdrawal(
    c: string,
    amount = '2500.50',
    extra: object = { status_callback: W_URL, loan_status_callback: LOAN_URL },
  ) {
    const res = await t.as(p.apiKey, 'post', `/v1/companies/${c}/${wPath}`, { amount, ...extra }).expect(201);
    return res.body.id as string;
  }

  async function paidOut(c: string, amount = '2500.50'): Promise<{ w: string; loan: string }> {
    const w = await withdrawal(c, amount);
    await t.admin('post', `/admin/v1/withdrawal-requests/${w}/accept`).expect(200);
    const res = await t.admin('post', `/admin/v1/withdrawal-requests/${w}/pay-out`).expect(200);
    return { w, loan: res.body.loanId };
  }

  const creditStatus = async (c: string) => (await t.as(p.apiKey, 'get', `/v1/companies/${c}/status`).expect(200)).body;

  describe('partners and credentials', () => {
    it('creates a partner with a one-time apiKey and a whsec_ signing secret', async () => {
      const res = await t.admin('post', '/admin/v1/partners', { name: 'Bank X' }).expect(201);
      expect(Object.keys(res.body)).toEqual(['id', 'name', 'apiKey', 'signingSecret', 'createdAt']);
      expect(res.body.signingSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(res.body.signingSecret.slice(6), 'base64')).toHaveLength(32);
      const [row] = await t.sql<{ api_key_hash: string }>('SELECT api_key_hash FROM partners WHERE id = $1', [
        res.body.id,
      ]);
      expect(row.api_key_hash).not.toContain(res.body.apiKey);
    });

    it('refuses operator endpoints without, or with a wrong, operator token (401)', async () => {
      await t.http().post('/admin/v1/partners').send({ name: 'x' }).expect(401);
      await t.as('wrong', 'post', '/admin/v1/partners', { name: 'x' }).expect(401);
      await t.as(p.apiKey, 'post', '/admin/v1/partners', { name: 'x' }).expect(401);
    });

    it('refuses partner endpoints without a valid API key (401)', async () => {
      const res = await t.http().get(`/v1/companies/${NIL}`).expect(401);
      expect(res.body).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
      await t.as('fsk_not-a-key', 'get', `/v1/companies/${NIL}`).expect(401);
      await t.admin('get', `/v1/companies/${NIL}`).expect(401);
    });

    it('rotates the signing secret, keeping the old one for 24 hours', async () => {
      const partner = await createPartner(t, 'Rotating');
      const res = await t.admin('post', `/admin/v1/partners/${partner.id}/rotate-signing-secret`).expect(200);
      expect(Object.keys(res.body)).toEqual(['signingSecret']);
      expect(res.body.signingSecret).toMatch(/^whsec_/);
      expect(res.body.signingSecret).not.toBe(partner.signingSecret);
      const [row] = await t.sql<{ previous_signing_secret: string; hours: number }>(
        `SELECT previous_signing_secret, round(extract(epoch FROM previous_secret_expires_at - now()) / 3600)::int AS hours FROM partners WHERE id = $1`,
        [partner.id],
      );
      // Sealed at rest (secret-box.ts): opened here with the test's SECRETS_KEY.
      const box = new SecretBox(t.config.secretsKeys);
      expect({
        ...row,
        previous_signing_secret: box.open(row.previous_signing_secret, 'partners.signing_secret', partner.id),
      }).toEqual({
        previous_signing_secret: partner.signingSecret,
        hours: 24,
      });
      expect(row.previous_signing_secret).toMatch(/^enc2:/);
      await t.admin('post', `/admin/v1/partners/${NIL}/rotate-signing-secret`).expect(404);
      await t.admin('post', `/admin/v1/partners/not-a-uuid/rotate-signing-secret`).expect(400);
    });
  });

  describe('companies', () => {
    it('creates a company with the variant callback property and reads it back', async () => {
      const res = await t
        .as(p.apiKey, 'post', '/v1/companies', {
          name: 'Acme Trading',
          registrationNumber: 'HRB 1',
          [companyProp]: COMPANY_URL,
        })
        .expect(201);
      expect(Object.keys(res.body)).toEqual(['id', 'name', 'registrationNumber', 'currency', companyProp, 'createdAt']);
      expect(res.body).toMatchObject({
        name: 'Acme Trading',
        registrationNumber: 'HRB 1',
        currency: 'EUR',
        [companyProp]: COMPANY_URL,
      });
      const got = await t.as(p.apiKey, 'get', `/v1/companies/${res.body.id}`).expect(200);
      expect(got.body).toEqual(res.body);
    });

    it("refuses the other variant's callback property, naming the right one", async () => {
      const res = await t.as(p.apiKey, 'post', '/v1/companies', { name: 'X', [otherProp]: COMPANY_URL }).expect(400);
      expect(res.body.message.join(' ')).toContain(companyProp);
      expect(res.body.message.join(' ')).toContain(otherProp);
    });

    it('starts with pending credit and no limit (GetCreditStatus)', async () => {
      const c = await company({ currency: 'USD' });
      expect(await creditStatus(c)).toEqual({
        companyId: c,
        creditStatus: 'pending',
        creditLimit: '0.00',
        borrowedAmount: '0.00',
        creditBalance: '0.00',
        currency: 'USD',
        updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      });
    });

    it(variant === 'B' ? 'serves terms' : 'has no terms endpoint (404)', async () => {
      const c = await company();
      const res = await t.as(p.apiKey, 'get', `/v1/companies/${c}/terms`);
      if (variant === 'A') {
        expect(res.status).toBe(404);
        return;
      }
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual([
        'companyId',
        'creditLimit',
        'currency',
        'annualInterestRate',
        'repaymentTermDays',
        'updatedAt',
      ]);
      expect(res.body).toMatchObject({
        companyId: c,
        creditLimit: '0.00',
        annualInterestRate: '0.00',
        repaymentTermDays: 30,
      });
    });

    it.each([
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: 'X', currency: 'EURO' }, 'currency'],
      [{ name: 'X', unknown: 1 }, 'unknown'],
      [{ name: 'X', [companyProp]: 'ftp://example.com/cb' }, companyProp],
      [{ name: 'X', [companyProp]: 'http://user:pw@127.0.0.1/cb' }, companyProp],
      [{ name: 'X', [companyProp]: 'not a url' }, companyProp],
      [{ name: 'X', [companyProp]: 42 }, companyProp],
    ])('refuses %j with 400 naming %s, writing nothing', async (payload, field) => {
      const [{ n: before }] = await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM companies');
      const res = await t.as(p.apiKey, 'post', '/v1/companies', payload).expect(400);
      expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      expect(Array.isArray(res.body.message)).toBe(true);
      expect(res.body.message.join(' ')).toContain(field);
      const [{ n: after }] = await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM companies');
      expect(after).toBe(before);
    });

    it('answers 413 to a body over 64 KiB and 400 to malformed JSON', async () => {
      await t.as(p.apiKey, 'post', '/v1/companies', { name: 'x'.repeat(70 * 1024) }).expect(413);
      const res = await t
        .as(p.apiKey, 'post', '/v1/companies')
        .set('Content-Type', 'application/json')
        .send('{"name":');
      expect(res.status).toBe(400);
      expect(res.body.statusCode).toBe(400);
    });

    it('answers 400 to a malformed id and 404 to an unknown one', async () => {
      await t.as(p.apiKey, 'get', '/v1/companies/not-a-uuid').expect(400);
      await t.as(p.apiKey, 'get', `/v1/companies/${NIL}`).expect(404);
      await t.as(p.apiKey, 'get', `/v1/companies/${NIL}/status`).expect(404);
    });

    it("hides another partner's company and everything under it behind 404", async () => {
      const c = await fundedCompany();
      const l = await limitRequest(c);
      const w = await withdrawal(c, '100');
      const { loan } = await paidOut(c, '50');
      const unknown = await t.as(other.apiKey, 'get', `/v1/companies/${NIL}`).expect(404);
      for (const path of [
        `/v1/companies/${c}`,
        `/v1/companies/${c}/status`,
        `/v1/companies/${c}/limit-requests/${l}`,
        `/v1/companies/${c}/limit-requests/${l}/status`,
        `/v1/companies/${c}/${wPath}/${w}`,
        `/v1/companies/${c}/${wPath}/${w}/status`,
        `/v1/companies/${c}/loans/${loan}`,
      ]) {
        const res = await t.as(other.apiKey, 'get', path);
        expect([path, res.status]).toEqual([path, 404]);
        expect(res.body.error).toBe(unknown.body.error);
      }
      await t.as(other.apiKey, 'post', `/v1/companies/${c}/limit-requests`, { amount: '1' }).expect(404);
      await t.as(other.apiKey, 'post', `/v1/companies/${c}/limit-requests/${l}/cancel`).expect(404);
      await t.as(other.apiKey, 'post', `/v1/companies/${c}/${wPath}`, { amount: '1' }).expect(404);
      await t.as(other.apiKey, 'post', `/v1/companies/${c}/${wPath}/${w}/cancel`).expect(404);
      // And a resource reached through another company id than its own is unknown too.
      const mine = await company();
      await t.as(p.apiKey, 'get', `/v1/companies/${mine}/limit-requests/${l}`).expect(404);
      await t.as(p.apiKey, 'get', `/v1/companies/${mine}/${wPath}/${w}`).expect(404);
      await t.as(p.apiKey, 'get', `/v1/companies/${mine}/loans/${loan}`).expect(404);
    });

    it('records no callback for creating a resource', async () => {
      const rows = await recorded(async () => {
        const c = await company();
        await limitRequest(c);
      });
      expect(rows).toEqual([]);
    });
  });

  describe('limit requests', () => {
    it('creates a pending limit request and reads it and its status', async () => {
      const c = await company();
      const res = await t
        .as(p.apiKey, 'post', `/v1/companies/${c}/limit-requests`, { amount: '1500.5', status_callback: LIMIT_URL })
        .expect(201);
      expect(Object.keys(res.body)).toEqual([
        'id',
        'companyId',
        'amount',
        'currency',
        'status',
        'status_callback',
        'createdAt',
        'updatedAt',
      ]);
      expect(res.body).toMatchObject({
        companyId: c,
        amount: '1500.50',
        currency: 'EUR',
        status: 'pending',
        status_callback: LIMIT_URL,
      });
      const got = await t.as(p.apiKey, 'get', `/v1/companies/${c}/limit-requests/${res.body.id}`).expect(200);
      expect(got.body).toEqual(res.body);
      const st = await t.as(p.apiKey, 'get', `/v1/companies/${c}/limit-requests/${res.body.id}/status`).expect(200);
      expect(st.body).toEqual({ limitRequestId: res.body.id, status: 'pending', updatedAt: res.body.updatedAt });
    });

    it.each([['0'], ['-5'], ['1.234'], ['abc'], [1500]])('refuses amount %p with 400 naming amount', async (amount) => {
      const c = await company();
      const res = await t.as(p.apiKey, 'post', `/v1/companies/${c}/limit-requests`, { amount }).expect(400);
      expect(res.body.message.join(' ')).toContain('amount');
    });

    it('refuses a bad status_callback with 400 naming it', async () => {
      const c = await company();
      const res = await t
        .as(p.apiKey, 'post', `/v1/companies/${c}/limit-requests`, { amount: '1', status_callback: 'ftp://x/y' })
        .expect(400);
      expect(res.body.message.join(' ')).toContain('status_callback');
    });

    it('approving a limit request records 3 then 0 then 2 and activates credit', async () => {
      const c = await company();
      const l = await limitRequest(c, '10000');
      const rows = await recorded(() => t.admin('post', `/admin/v1/limit-requests/${l}/approve`).expect(200));
      expect(rows).toEqual([
        { message: 3, url: LIMIT_URL, body: body(3, { c, l }) },
        { message: 0, url: COMPANY_URL, body: body(0, { c }) },
        { message: 2, url: COMPANY_URL, body: body(2, { c }) },
      ]);
      expect(await creditStatus(c)).toMatchObject({
        creditStatus: 'active',
        creditLimit: '10000.00',
        creditBalance: '10000.00',
      });
      const st = await t.as(p.apiKey, 'get', `/v1/companies/${c}/limit-requests/${l}/status`).expect(200);
      expect(st.body.status).toBe('approved');
    });

    it('records only the callbacks whose URL is registered', async () => {
      const c = await company({});
      const l = await limitRequest(c, '10', {});
      expect(await recorded(() => t.admin('post', `/admin/v1/limit-requests/${l}/approve`).expect(200))).toEqual([]);
      const c2 = await company();
      const l2 = await limitRequest(c2, '10', {});
      const rows = await recorded(() => t.admin('post', `/admin/v1/limit-requests/${l2}/approve`).expect(200));
      expect(rows.map((r) => r.message)).toEqual([0, 2]);
    });

    it('approving the same amount again records 3 only (no credit change)', async () => {
      const c = await fundedCompany('500');
      const l = await limitRequest(c, '500');
      const rows = await recorded(() => t.admin('post', `/admin/v1/limit-requests/${l}/approve`).expect(200));
      expect(rows.map((r) => r.message)).toEqual([3]);
    });

    it('rejecting records 3 with the new status; canceling by the partner records 3', async () => {
      const c = await company();
      const l = await limitRequest(c);
      const rows = await recorded(() => t.admin('post', `/admin/v1/limit-requests/${l}/reject`).expect(200));
      expect(rows).toEqual([{ message: 3, url: LIMIT_URL, body: body(3, { c, l }) }]);
      const l2 = await limitRequest(c);
      const res = await t.as(p.apiKey, 'post', `/v1/companies/${c}/limit-requests/${l2}/cancel`).expect(200);
      expect(res.body.status).toBe('canceled');
      expect(await creditStatus(c)).toMatchObject({ creditStatus: 'pending', creditLimit: '0.00' });
    });

    it.each([
      ['approved', 'approve'],
      ['approved', 'reject'],
      ['approved', 'cancel'],
      ['rejected', 'approve'],
      ['rejected', 'cancel'],
      ['canceled', 'approve'],
      ['canceled', 'reject'],
      ['canceled', 'cancel'],
    ])('refuses %s → %s with 409 naming the current status, recording nothing', async (state, action) => {
      const c = await company();
      const l = await limitRequest(c);
      const act = (a: string) =>
        a === 'cancel'
          ? t.as(p.apiKey, 'post', `/v1/companies/${c}/limit-requests/${l}/cancel`)
          : t.admin('post', `/admin/v1/limit-requests/${l}/${a}`);
      await act({ approved: 'approve', rejected: 'reject', canceled: 'cancel' }[state]!).expect(200);
      let res: { status: number; body: { message: string } } | undefined;
      const rows = await recorded(async () => {
        res = await act(action);
      });
      expect(res!.status).toBe(409);
      expect(res!.body.message).toContain(state);
      expect(rows).toEqual([]);
    });

    it('refuses approval below the borrowed amount with 422, changing nothing', async () => {
      const c = await fundedCompany('1000');
      await paidOut(c, '800');
      const l = await limitRequest(c, '500');
      const rows = await recorded(() => t.admin('post', `/admin/v1/limit-requests/${l}/approve`).expect(422));
      expect(rows).toEqual([]);
      const st = await t.as(p.apiKey, 'get', `/v1/companies/${c}/limit-requests/${l}/status`).expect(200);
      expect(st.body.status).toBe('pending');
    });

    it('answers 404 for unknown limit requests and 400 for malformed ids', async () => {
      await t.admin('post', `/admin/v1/limit-requests/${NIL}/approve`).expect(404);
      await t.admin('post', `/admin/v1/limit-requests/nope/approve`).expect(400);
    });
  });

  describe('operator credit changes', () => {
    it('a limit change records 0 then 2; the same values again record nothing', async () => {
      const c = await fundedCompany('1000');
      const rows = await recorded(() =>
        t.admin('patch', `/admin/v1/companies/${c}/credit`, { creditLimit: '2000.5' }).expect(200),
      );
      expect(rows).toEqual([
        { message: 0, url: COMPANY_URL, body: body(0, { c }) },
        { message: 2, url: COMPANY_URL, body: body(2, { c }) },
      ]);
      const again = await recorded(() =>
        t
          .admin('patch', `/admin/v1/companies/${c}/credit`, { creditLimit: '2000.50', creditStatus: 'active' })
          .expect(200),
      );
      expect(again).toEqual([]);
    });

    it('a status or terms change records 0 only', async () => {
      const c = await fundedCompany('1000');
      const res = await t.admin('patch', `/admin/v1/companies/${c}/credit`, { creditStatus: 'suspended' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        companyId: c,
        creditStatus: 'suspended',
        creditLimit: '1000.00',
        creditBalance: '1000.00',
      });
      const rows = await recorded(() =>
        t
          .admin('patch', `/admin/v1/companies/${c}/credit`, { annualInterestRate: '7.5', repaymentTermDays: 60 })
          .expect(200),
      );
      expect(rows.map((r) => r.message)).toEqual([0]);
      if (variant === 'B') {
        const terms = await t.as(p.apiKey, 'get', `/v1/companies/${c}/terms`).expect(200);
        expect(terms.body).toMatchObject({ annualInterestRate: '7.50', repaymentTermDays: 60, creditLimit: '1000.00' });
      }
    });

    it('refuses a limit below the borrowed amount with 422 and an illegal status change with 409', async () => {
      const c = await fundedCompany('1000');
      await paidOut(c, '600');
      const rows = await recorded(async () => {
        await t.admin('patch', `/admin/v1/companies/${c}/credit`, { creditLimit: '599.99' }).expect(422);
        await t.admin('patch', `/admin/v1/companies/${c}/credit`, { creditStatus: 'closed' }).expect(200);
        const res = await t.admin('patch', `/admin/v1/companies/${c}/credit`, { creditStatus: 'active' }).expect(409);
        expect(res.body.message).toContain('closed');
      });
      expect(rows.map((r) => r.message)).toEqual([0]);
      expect(await creditStatus(c)).toMatchObject({
        creditStatus: 'closed',
        creditLimit: '1000.00',
        borrowedAmount: '600.00',
      });
    });

    it.each([
      [{ creditLimit: '-1' }],
      [{ creditStatus: 'frozen' }],
      [{ repaymentTermDays: 0 }],
      [{ annualInterestRate: '7.555' }],
      [{ extra: 1 }],
    ])('refuses %j with 400', async (payload) => {
      const c = await company();
      await t.admin('patch', `/admin/v1/companies/${c}/credit`, payload).expect(400);
    });

    it('answers 404 for an unknown company', async () => {
      await t.admin('patch', `/admin/v1/companies/${NIL}/credit`, { creditLimit: '1' }).expect(404);
    });
  });

  describe('withdrawal requests and loans', () => {
    it('refuses a withdrawal on pending credit or above the balance with 422, writing nothing', async () => {
      const pending = await company();
      await t.as(p.apiKey, 'post', `/v1/companies/${pending}/${wPath}`, { amount: '1' }).expect(422);
      const c = await fundedCompany('1000');
      const res = await t.as(p.apiKey, 'post', `/v1/companies/${c}/${wPath}`, { amount: '1000.01' }).expect(422);
      expect(res.body.message).toContain('1000.00');
      const [{ n }] = await t.sql<{ n: number }>(
        'SELECT count(*)::int AS n FROM withdrawal_requests WHERE company_id = ANY($1)',
        [[pending, c]],
      );
      expect(n).toBe(0);
    });

    it('creates a withdrawal request and reads it and its status', async () => {
      const c = await fundedCompany();
      const res = await t
        .as(p.apiKey, 'post', `/v1/companies/${c}/${wPath}`, {
          amount: '2500.5',
          status_callback: W_URL,
          loan_status_callback: LOAN_URL,
        })
        .expect(201);
      expect(Object.keys(res.body)).toEqual([
        'id',
        'companyId',
        'amount',
        'currency',
        'status',
        'status_callback',
        'loan_status_callback',
        'loanId',
        'createdAt',
        'updatedAt',
      ]);
      expect(res.body).toMatchObject({
        companyId: c,
        amount: '2500.50',
        currency: 'EUR',
        status: 'created',
        loanId: null,
      });
      const w = res.body.id;
      expect((await t.as(p.apiKey, 'get', `/v1/companies/${c}/${wPath}/${w}`).expect(200)).body).toEqual(res.body);
      const st = await t.as(p.apiKey, 'get', `/v1/companies/${c}/${wPath}/${w}/status`).expect(200);
      expect(st.body).toEqual({ withdrawalId: w, status: 'created', updatedAt: res.body.updatedAt });
    });

    it(`answers 404 on the other variant's withdrawal path (/${wrongWPath})`, async () => {
      const c = await fundedCompany();
      await t.as(p.apiKey, 'post', `/v1/companies/${c}/${wrongWPath}`, { amount: '1' }).expect(404);
      const w = await withdrawal(c, '1');
      await t.as(p.apiKey, 'get', `/v1/companies/${c}/${wrongWPath}/${w}`).expect(404);
    });

    it('accept records 1; pay-out records 1 with the loan id, then 2, and draws the balance', async () => {
      const c = await fundedCompany('10000');
      const w = await withdrawal(c, '2500.50');
      const accepted = await recorded(() => t.admin('post', `/admin/v1/withdrawal-requests/${w}/accept`).expect(200));
      expect(accepted).toEqual([{ message: 1, url: W_URL, body: body(1, { w, c }) }]);
      let loan = '';
      const paid = await recorded(async () => {
        const res = await t.admin('post', `/admin/v1/withdrawal-requests/${w}/pay-out`).expect(200);
        expect(res.body).toMatchObject({ id: w, status: 'paid_out', loanId: expect.any(String) });
        loan = res.body.loanId;
      });
      expect(paid).toEqual([
        { message: 1, url: W_URL, body: body(1, { w, c, loan }) },
        { message: 2, url: COMPANY_URL, body: body(2, { c }) },
      ]);
      expect(await creditStatus(c)).toMatchObject({
        creditLimit: '10000.00',
        borrowedAmount: '2500.50',
        creditBalance: '7499.50',
      });
      const res = await t.as(p.apiKey, 'get', `/v1/companies/${c}/loans/${loan}`).expect(200);
      expect(res.body).toEqual({
        id: loan,
        companyId: c,
        withdrawalId: w,
        principal: '2500.50',
        outstanding: '2500.50',
        currency: 'EUR',
        status: 'active',
        payments: [],
        lastPayment: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
    });

    it('a partial payment records 4 then 2; the final one records 4, 1 (repaid), 2', async () => {
      const c = await fundedCompany('10000');
      const { w, loan } = await paidOut(c, '2500.50');
      const partial = await recorded(async () => {
        const res = await t
          .admin('post', `/admin/v1/loans/${loan}/payments`, { amount: '1000.25', paidAt: '2026-01-02T03:04:05Z' })
          .expect(201);
        expect(res.body).toMatchObject({ outstanding: '1500.25', status: 'active' });
        expect(res.body.payments).toEqual([
          { id: expect.any(String), amount: '1000.25', paidAt: '2026-01-02T03:04:05.000Z' },
        ]);
        expect(res.body.lastPayment).toEqual(res.body.payments[0]);
      });
      expect(partial).toEqual([
        { message: 4, url: LOAN_URL, body: body(4, { w, c, loan }) },
        { message: 2, url: COMPANY_URL, body: body(2, { c }) },
      ]);
      expect(await creditStatus(c)).toMatchObject({ borrowedAmount: '1500.25', creditBalance: '8499.75' });
      await t.admin('post', `/admin/v1/loans/${loan}/payments`, { amount: '1500.26' }).expect(422);
      const final = await recorded(() =>
        t.admin('post', `/admin/v1/loans/${loan}/payments`, { amount: '1500.25' }).expect(201),
      );
      expect(final).toEqual([
        { message: 4, url: LOAN_URL, body: body(4, { w, c, loan }) },
        { message: 1, url: W_URL, body: body(1, { w, c, loan }) },
        { message: 2, url: COMPANY_URL, body: body(2, { c }) },
      ]);
      expect(await creditStatus(c)).toMatchObject({ borrowedAmount: '0.00', creditBalance: '10000.00' });
      const l = await t.as(p.apiKey, 'get', `/v1/companies/${c}/loans/${loan}`).expect(200);
      expect(l.body).toMatchObject({ status: 'repaid', outstanding: '0.00' });
      expect(l.body.payments.map((x: { amount: string }) => x.amount)).toEqual(['1000.25', '1500.25']);
      expect(l.body.lastPayment.amount).toBe('1500.25');
      const st = await t.as(p.apiKey, 'get', `/v1/companies/${c}/${wPath}/${w}/status`).expect(200);
      expect(st.body.status).toBe('repaid');
      await t.admin('post', `/admin/v1/loans/${loan}/payments`, { amount: '0.01' }).expect(422);
    });

    it('refuses a payment in the future or malformed, and on an unknown loan', async () => {
      const c = await fundedCompany();
      const { loan } = await paidOut(c, '10');
      const future = new Date(Date.now() + 3600_000).toISOString();
      const res = await t
        .admin('post', `/admin/v1/loans/${loan}/payments`, { amount: '1', paidAt: future })
        .expect(400);
      expect(res.body.message.join(' ')).toContain('paidAt');
      await t.admin('post', `/admin/v1/loans/${loan}/payments`, { amount: '1', paidAt: 'yesterday' }).expect(400);
      await t.admin('post', `/admin/v1/loans/${NIL}/payments`, { amount: '1' }).expect(404);
    });

    it('a partner cancels a created or accepted withdrawal (1 each), not a paid-out one (409)', async () => {
      const c = await fundedCompany();
      const w1 = await withdrawal(c, '10');
      const rows = await recorded(() => t.as(p.apiKey, 'post', `/v1/companies/${c}/${wPath}/${w1}/cancel`).expect(200));
      expect(rows).toEqual([{ message: 1, url: W_URL, body: body(1, { w: w1, c }) }]);
      const w2 = await withdrawal(c, '10');
      await t.admin('post', `/admin/v1/withdrawal-requests/${w2}/accept`).expect(200);
      const res = await t.as(p.apiKey, 'post', `/v1/companies/${c}/${wPath}/${w2}/cancel`).expect(200);
      expect(res.body.status).toBe('cancelled');
      const { w: w3 } = await paidOut(c, '10');
      const refused = await t.as(p.apiKey, 'post', `/v1/companies/${c}/${wPath}/${w3}/cancel`).expect(409);
      expect(refused.body.message).toContain('paid_out');
    });

    it.each([
      ['created', 'pay-out'],
      ['accepted', 'accept'],
      ['accepted', 'reject'],
      ['rejected', 'accept'],
      ['rejected', 'pay-out'],
      ['cancelled', 'accept'],
      ['paid_out', 'accept'],
      ['paid_out', 'reject'],
      ['paid_out', 'pay-out'],
    ])('refuses %s → %s with 409, recording nothing', async (state, action) => {
      const c = await fundedCompany();
      const w = await withdrawal(c, '10');
      const steps: Record<string, string[]> = {
        created: [],
        accepted: ['accept'],
        rejected: ['reject'],
        paid_out: ['accept', 'pay-out'],
      };
      if (state === 'cancelled') await t.as(p.apiKey, 'post', `/v1/companies/${c}/${wPath}/${w}/cancel`).expect(200);
      for (const step of steps[state] ?? [])
        await t.admin('post', `/admin/v1/withdrawal-requests/${w}/${step}`).expect(200);
      let res: { status: number; body: { message: string } } | undefined;
      const rows = await recorded(async () => {
        res = await t.admin('post', `/admin/v1/withdrawal-requests/${w}/${action}`);
      });
      expect(res!.status).toBe(409);
      expect(res!.body.message).toContain(state);
      expect(rows).toEqual([]);
    });

    it('refuses accept and pay-out when the credit is no longer active or the balance is short (422)', async () => {
      const c = await fundedCompany('100');
      const w1 = await withdrawal(c, '80');
      const w2 = await withdrawal(c, '80');
      await t.admin('post', `/admin/v1/withdrawal-requests/${w1}/accept`).expect(200);
      await t.admin('post', `/admin/v1/withdrawal-requests/${w2}/accept`).expect(200);
      await t.admin('post', `/admin/v1/withdrawal-requests/${w1}/pay-out`).expect(200);
      const rows = await recorded(() => t.admin('post', `/admin/v1/withdrawal-requests/${w2}/pay-out`).expect(422));
      expect(rows).toEqual([]);
      const w3 = await withdrawal(c, '10');
      await t.admin('patch', `/admin/v1/companies/${c}/credit`, { creditStatus: 'suspended' }).expect(200);
      await t.admin('post', `/admin/v1/withdrawal-requests/${w3}/accept`).expect(422);
      expect(await creditStatus(c)).toMatchObject({ borrowedAmount: '80.00', creditBalance: '20.00' });
    });

    it('answers 404 for unknown withdrawal requests', async () => {
      await t.admin('post', `/admin/v1/withdrawal-requests/${NIL}/accept`).expect(404);
      await t.admin('post', `/admin/v1/withdrawal-requests/${NIL}/pay-out`).expect(404);
    });
  });

  describe('idempotent creates', () => {
    it('replays the first response for the same key and body, creating nothing more', async () => {
      const send = (name: string) =>
        t.as(p.apiKey, 'post', '/v1/companies', { name }).set('Idempotency-Key', `key-${variant}-1`);
      const first = await send('Once Ltd').expect(201);
      const second = await send('Once Ltd').expect(201);
      expect(second.body).toEqual(first.body);
      expect(second.headers['idempotent-replayed']).toBe('true');
      const [{ n }] = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM companies WHERE name = 'Once Ltd'`);
      expect(n).toBe(1);
      await send('Other Ltd').expect(422);
    });

    it('scopes keys per partner and releases a key whose request failed', async () => {
      const key = `key-${variant}-2`;
      await t.as(p.apiKey, 'post', '/v1/companies', { name: 'A' }).set('Idempotency-Key', key).expect(201);
      await t.as(other.apiKey, 'post', '/v1/companies', { name: 'B' }).set('Idempotency-Key', key).expect(201);
      const c = await company();
      const k2 = `key-${variant}-3`;
      await t
        .as(p.apiKey, 'post', `/v1/companies/${c}/${wPath}`, { amount: '5' })
        .set('Idempotency-Key', k2)
        .expect(422);
      await t.admin('post', `/admin/v1/limit-requests/${await limitRequest(c, '10')}/approve`).expect(200);
      await t
        .as(p.apiKey, 'post', `/v1/companies/${c}/${wPath}`, { amount: '5' })
        .set('Idempotency-Key', k2)
        .expect(201);
      await t.as(p.apiKey, 'post', '/v1/companies', { name: 'A' }).set('Idempotency-Key', 'x'.repeat(256)).expect(400);
    });
  });

  describe('callbacks, read by the operator', () => {
    it('lists callback records with filters and a cursor, and shows one with its attempts', async () => {
      const c = await fundedCompany('100');
      const all = await t.admin('get', `/admin/v1/callbacks?companyId=${c}`).expect(200);
      expect(all.body.items.map((i: { message: number }) => i.message)).toEqual([2, 0, 3]); // newest first
      const item = all.body.items[2];
      expect(Object.keys(item)).toEqual([
        'id',
        'message',
        'name',
        'url',
        'body',
        'status',
        'attemptCount',
        'nextAttemptAt',
        'lastError',
        'companyId',
        'createdAt',
        'deliveredAt',
        'test',
      ]);
      expect(item).toMatchObject({
        message: 3,
        name: 'LimitRequestStatusChanged',
        url: LIMIT_URL,
        status: 'pending',
        attemptCount: 0,
        companyId: c,
        test: false,
      });
      expect(item.body).toMatchObject({ message: 3, companyId: c, withdrawalId: null, loanId: null });
      const page1 = await t.admin('get', `/admin/v1/callbacks?companyId=${c}&limit=2`).expect(200);
      expect(page1.body.items).toHaveLength(2);
      const page2 = await t
        .admin('get', `/admin/v1/callbacks?companyId=${c}&limit=2&cursor=${page1.body.nextCursor}`)
        .expect(200);
      expect(page2.body).toEqual({ items: [all.body.items[2]], nextCursor: null });
      const zeros = await t.admin('get', `/admin/v1/callbacks?companyId=${c}&message=0&status=pending`).expect(200);
      expect(zeros.body.items.map((i: { id: string }) => i.id)).toEqual([all.body.items[1].id]);
      const one = await t.admin('get', `/admin/v1/callbacks/${item.id}`).expect(200);
      expect(one.body).toEqual({ ...item, attempts: [] });
      await t.admin('get', `/admin/v1/callbacks/${NIL}`).expect(404);
      await t.admin('get', `/admin/v1/callbacks?status=lost`).expect(400);
      await t.admin('get', `/admin/v1/callbacks?cursor=bogus`).expect(400);
      await t.http().get('/admin/v1/callbacks').expect(401);
    });
  });

  describe('public and operations endpoints', () => {
    it('publishes the callback source addresses without authentication', async () => {
      const res = await t.http().get('/v1/callbacks/source-ips').expect(200);
      expect(res.body).toEqual({
        variant,
        addresses:
          variant === 'A'
            ? ['20.105.118.54', '20.93.102.228']
            : ['20.82.192.194', '20.67.208.150', '20.105.65.222', '20.93.102.228'],
      });
    });

    it('answers health, readiness and the OpenAPI document', async () => {
      await t.http().get('/health').expect(200);
      expect((await t.http().get('/ready').expect(200)).body).toMatchObject({ database: 'ok', redis: 'ok' });
      const doc = await t.http().get('/docs-json').expect(200);
      expect(doc.body.openapi).toMatch(/^3\./);
      expect(Object.keys(doc.body.paths)).toEqual(
        expect.arrayContaining([
          '/v1/companies',
          '/v1/companies/{companyId}/status',
          `/v1/companies/{companyId}/${wPath}`,
          '/admin/v1/callbacks',
        ]),
      );
      const schemaOf = (path: string, method: string, status: string) => {
        const ref: string = doc.body.paths[path][method].responses[status].content['application/json'].schema.$ref;
        return doc.body.components.schemas[ref.split('/').pop()!];
      };
      expect(Object.keys(schemaOf('/v1/companies/{companyId}/status', 'get', '200').properties)).toEqual([
        'companyId',
        'creditStatus',
        'creditLimit',
        'borrowedAmount',
        'creditBalance',
        'currency',
        'updatedAt',
      ]);
      expect(Object.keys(schemaOf(`/v1/companies/{companyId}/${wPath}`, 'post', '201').properties)).toHaveLength(10);
      expect(doc.body.paths['/v1/companies'].post.parameters).toEqual(
        expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key', in: 'header' })]),
      );
      expect(
        Object.keys(doc.body.paths[`/v1/companies/{companyId}/${wPath}/{withdrawalRequestId}/cancel`].post.responses),
      ).toEqual(expect.arrayContaining(['200', '401', '404', '409']));
      expect(Object.keys(doc.body.components.schemas.CallbackBody.properties)).toEqual([
        'message',
        'withdrawalId',
        'companyId',
        'limitRequestId',
        'loanId',
      ]);
      await t.http().get('/docs').expect(200);
    });
  });
});
