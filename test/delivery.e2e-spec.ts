import { Webhook } from 'standardwebhooks';
import { Receiver, Received, webhookHeaders } from './support/receiver.js';
import { harness, Partner, TestApp, until } from './support/harness.js';

describe.each(['A', 'B'] as const)('callback delivery, variant %s', (variant) => {
  const companyProp = variant === 'A' ? 'callback' : 'status_callback';
  const wPath = variant === 'A' ? 'withdrawal-requests' : 'withdrawal';
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;

  // Sockets bind to 127.0.0.2: the receiver must see that address, not 127.0.0.1.
  const e2e = harness({ API_VARIANT: variant, CALLBACK_LOCAL_ADDRESS: '127.0.0.2' });
  beforeAll(() => ({ t, p, rx } = e2e));

  /** Runs the whole flow and returns what arrived at each URL. */
  async function flow(tag: string) {
    const u = (s: string) => rx.url(`/${tag}/${s}`);
    const c = (await t.as(p.apiKey, 'post', '/v1/companies', { name: 'Acme', [companyProp]: u('company') }).expect(201))
      .body.id;
    const l = (
      await t
        .as(p.apiKey, 'post', `/v1/companies/${c}/limit-requests`, { amount: '1000', status_callback: u('limit') })
        .expect(201)
    ).body.id;
    await t.admin('post', `/admin/v1/limit-requests/${l}/approve`).expect(200);
    const w = (
      await t
        .as(p.apiKey, 'post', `/v1/companies/${c}/${wPath}`, {
          amount: '100',
          status_callback: u('withdrawal'),
          loan_status_callback: u('loan'),
        })
        .expect(201)
    ).body.id;
    await t.admin('post', `/admin/v1/withdrawal-requests/${w}/accept`).expect(200);
    const loan = (await t.admin('post', `/admin/v1/withdrawal-requests/${w}/pay-out`).expect(200)).body.loanId;
    await t.admin('post', `/admin/v1/loans/${loan}/payments`, { amount: '100' }).expect(201);
    return { c, l, w, loan };
  }

  const at = (tag: string, s: string) => rx.on(`/${tag}/${s}`);

  it('delivers every message code 0–4 after the operation that causes it, exactly as recorded', async () => {
    const { c, l, w, loan } = await flow('all');
    // limit: 3; company: 0, 2 (approve), 2 (pay-out), 2 (payment); withdrawal: 1 ×3 (accept, pay-out, repaid); loan: 4
    await until(() => rx.hits.filter((h) => h.path.startsWith('/all/')).length === 9, { what: '9 callbacks' });
    const bodies = (s: string) => at('all', s).map((h) => JSON.parse(h.body));
    expect(bodies('limit')).toEqual([
      { message: 3, withdrawalId: null, companyId: c, limitRequestId: l, loanId: null },
    ]);
    expect(
      bodies('company')
        .map((b) => b.message)
        .sort(),
    ).toEqual([0, 2, 2, 2]);
    for (const b of bodies('company'))
      expect(b).toEqual({ message: b.message, withdrawalId: null, companyId: c, limitRequestId: null, loanId: null });
    expect(
      bodies('withdrawal')
        .map((b) => b.loanId)
        .sort((a, b) => String(a).localeCompare(String(b))),
    ).toEqual([loan, loan, null].sort((a, b) => String(a).localeCompare(String(b))));
    for (const b of bodies('withdrawal'))
      expect(b).toMatchObject({ message: 1, withdrawalId: w, companyId: c, limitRequestId: null });
    expect(bodies('loan')).toEqual([{ message: 4, withdrawalId: w, companyId: c, limitRequestId: null, loanId: loan }]);
    // Raw bytes: exactly the five keys in the contract's order.
    expect(at('all', 'limit')[0].body).toBe(
      `{"message":3,"withdrawalId":null,"companyId":"${c}","limitRequestId":"${l}","loanId":null}`,
    );
  });

  it('sends POST with the Standard Webhooks headers, verifiable with the standardwebhooks package, from 127.0.0.2', async () => {
    const { c } = await flow('hdr');
    await until(() => rx.hits.filter((h) => h.path.startsWith('/hdr/')).length === 9, { what: '9 callbacks' });
    const records = (await t.admin('get', `/admin/v1/callbacks?companyId=${c}&limit=100`).expect(200)).body.items as {
      id: string;
      url: string;
      status: string;
    }[];
    expect(records).toHaveLength(9);
    const hook = new Webhook(p.signingSecret);
    for (const hit of rx.hits.filter((h: Received) => h.path.startsWith('/hdr/'))) {
      expect(hit.method).toBe('POST');
      expect(hit.remoteAddress).toBe('127.0.0.2');
      expect(hit.headers['content-type']).toBe('application/json');
      expect(hit.headers['user-agent']).toMatch(/^funding-service-callbacks\/\d+\.\d+\.\d+$/);
      expect(records.map((r) => r.id)).toContain(hit.headers['webhook-id']);
      expect(Math.abs(Number(hit.headers['webhook-timestamp']) - hit.at / 1000)).toBeLessThan(5);
      expect(hit.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(hook.verify(hit.body, webhookHeaders(hit.headers))).toEqual(JSON.parse(hit.body));
    }
    await until(
      async () => {
        const r = (await t.admin('get', `/admin/v1/callbacks?companyId=${c}&status=delivered&limit=100`)).body.items
          .length;
        return r === 9;
      },
      { what: 'all 9 marked delivered' },
    );
    const one = (await t.admin('get', `/admin/v1/callbacks/${records[0].id}`).expect(200)).body;
    expect(one).toMatchObject({
      status: 'delivered',
      attemptCount: 1,
      lastError: null,
      nextAttemptAt: null,
      deliveredAt: expect.any(String),
    });
    expect(one.attempts).toEqual([
      {
        number: 1,
        startedAt: expect.any(String),
        durationMs: expect.any(Number),
        statusCode: 204,
        error: null,
        responseBody: '',
        sourceAddress: '127.0.0.2',
      },
    ]);
    // The attempt log keeps what was sent, header for header as each receiver got it, what the attempt was, and the answer's head.
    type Row = {
      callback_id: string;
      kind: string;
      schedule_number: number;
      request_headers: Record<string, string>;
      response_status: string;
      response_headers: [string, string][];
    };
    const rows = await t.sql<Row>(
      'SELECT callback_id, kind, schedule_number, request_headers, response_status, response_headers FROM callback_attempts WHERE callback_id = ANY($1)',
      [records.map((r) => r.id)],
    );
    const sent = ['content-type', 'user-agent', 'webhook-id', 'webhook-signature', 'webhook-timestamp'];
    for (const hit of rx.hits.filter((h: Received) => h.path.startsWith('/hdr/'))) {
      const row = rows.find((r) => r.callback_id === hit.headers['webhook-id'])!;
      expect(row).toMatchObject({ kind: 'first', schedule_number: 1, response_status: 'HTTP/1.1 204 No Content' });
      expect(Object.keys(row.request_headers).sort()).toEqual(sent);
      for (const name of sent) expect(row.request_headers[name]).toBe(hit.headers[name]);
      expect(row.response_headers.map(([name]) => name.toLowerCase())).toContain('date');
    }
  });

  it('signs with both the new and the old secret for 24 hours after a rotation', async () => {
    const old = p.signingSecret;
    const fresh = (await t.admin('post', `/admin/v1/partners/${p.id}/rotate-signing-secret`).expect(200)).body
      .signingSecret;
    const c = (
      await t.as(p.apiKey, 'post', '/v1/companies', { name: 'R', [companyProp]: rx.url('/rot/company') }).expect(201)
    ).body.id;
    await t.admin('patch', `/admin/v1/companies/${c}/credit`, { creditStatus: 'closed' }).expect(200);
    const [hit] = await until(() => (rx.on('/rot/company').length === 1 ? rx.on('/rot/company') : null), {
      what: 'rotated callback',
    });
    expect(String(hit.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [old, fresh])
      expect(new Webhook(secret).verify(hit.body, webhookHeaders(hit.headers))).toBeTruthy();
    p.signingSecret = fresh;
  });
});
