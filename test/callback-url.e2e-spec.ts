import { harness, Partner, TestApp } from './support/harness.js';

// Production defaults: https only, no private destinations. Nothing here connects anywhere:
// registration checks syntax and (for host names) DNS only.
describe('callback URL checks at registration (production defaults)', () => {
  let t: TestApp;
  let p: Partner;

  const e2e = harness({ ROLE: 'api', CALLBACK_ALLOW_HTTP: 'false', CALLBACK_ALLOW_PRIVATE_TARGETS: 'false' });
  beforeAll(() => ({ t, p } = e2e));

  it.each(
    [
      ['http://93.184.215.14/cb', 'https'],
      ['https://10.0.0.1/cb', 'private'],
      ['https://169.254.169.254/latest/meta-data', 'link-local'],
      ['https://127.0.0.1/cb', 'loopback'],
      ['https://2130706433/cb', 'loopback'],
      ['https://0x7f.1/cb', 'loopback'],
      ['https://[::1]/cb', 'loopback'],
      ['https://[::ffff:10.0.0.1]/cb', 'private'],
      ['https://100.64.0.1/cb', 'CGNAT'],
      ['https://224.0.0.1/cb', 'multicast'],
      ['https://localhost/cb', 'local'],
      ['https://partner.invalid/cb', 'does not resolve'],
      ['https://user:secret@93.184.215.14/cb', 'user information'],
      [`https://93.184.215.14/${'a'.repeat(2048)}`, '2048'],
    ].map(([url, why]) => [url.length > 80 ? `${url.slice(0, 40)}… (${url.length} chars)` : url, url, why]),
  )('refuses %s with 400 naming status_callback, creating nothing', async (_label, url, why) => {
    const res = await t.as(p.apiKey, 'post', '/v1/companies', { name: 'X', status_callback: url }).expect(400);
    const message = (res.body.message as string[]).join(' ');
    expect(message).toContain('status_callback');
    expect(message).toContain(why);
    const [{ n }] = await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM companies');
    expect(n).toBe(0);
  });

  it('accepts a public https address and names the refused property on limit and withdrawal requests', async () => {
    const c = await t
      .as(p.apiKey, 'post', '/v1/companies', { name: 'X', status_callback: 'https://93.184.215.14/cb' })
      .expect(201);
    const res = await t
      .as(p.apiKey, 'post', `/v1/companies/${c.body.id}/limit-requests`, {
        amount: '1',
        status_callback: 'https://10.1.2.3/',
      })
      .expect(400);
    expect(res.body.message.join(' ')).toContain('status_callback');
    const w = await t
      .as(p.apiKey, 'post', `/v1/companies/${c.body.id}/withdrawal`, {
        amount: '1',
        loan_status_callback: 'https://192.168.1.1/',
      })
      .expect(400);
    expect(w.body.message.join(' ')).toContain('loan_status_callback');
  });

  it.each([
    ['https://10.0.0.1/cb', 'private'],
    ['https://127.0.0.1/cb', 'loopback'],
    ['http://93.184.215.14/cb', 'https'],
  ])('a PATCH to %s is refused as at creation (400 naming the property), changing nothing', async (url, why) => {
    const c = (
      await t
        .as(p.apiKey, 'post', '/v1/companies', { name: 'Y', status_callback: 'https://93.184.215.14/cb' })
        .expect(201)
    ).body.id;
    const lr = (await t.as(p.apiKey, 'post', `/v1/companies/${c}/limit-requests`, { amount: '1' }).expect(201)).body.id;
    for (const [path, property] of [
      [`/v1/companies/${c}`, 'status_callback'],
      [`/v1/companies/${c}/limit-requests/${lr}`, 'status_callback'],
    ]) {
      const res = await t.as(p.apiKey, 'patch', path, { [property]: url }).expect(400);
      expect(res.body.message.join(' ')).toContain(property);
      expect(res.body.message.join(' ')).toContain(why);
    }
    expect(await t.sql('SELECT callback_url FROM companies WHERE id = $1', [c])).toEqual([
      { callback_url: 'https://93.184.215.14/cb' },
    ]);
    expect(await t.sql('SELECT status_callback FROM limit_requests WHERE id = $1', [lr])).toEqual([
      { status_callback: null },
    ]);
  });

  it('a PATCH stores the new URL on the resource itself: company, limit request, withdrawal', async () => {
    const url = 'https://93.184.215.14/moved';
    const c = (
      await t
        .as(p.apiKey, 'post', '/v1/companies', { name: 'Z', status_callback: 'https://93.184.215.14/cb' })
        .expect(201)
    ).body.id;
    const lr = (await t.as(p.apiKey, 'post', `/v1/companies/${c}/limit-requests`, { amount: '1' }).expect(201)).body.id;
    await t
      .admin('patch', `/admin/v1/companies/${c}/credit`, { creditStatus: 'active', creditLimit: '10' })
      .expect(200);
    const w = (await t.as(p.apiKey, 'post', `/v1/companies/${c}/withdrawal`, { amount: '1' }).expect(201)).body.id;
    await t.as(p.apiKey, 'patch', `/v1/companies/${c}`, { status_callback: url }).expect(200);
    await t.as(p.apiKey, 'patch', `/v1/companies/${c}/limit-requests/${lr}`, { status_callback: url }).expect(200);
    await t.as(p.apiKey, 'patch', `/v1/companies/${c}/withdrawal/${w}`, { loan_status_callback: url }).expect(200);
    expect(await t.sql('SELECT callback_url FROM companies WHERE id = $1', [c])).toEqual([{ callback_url: url }]);
    expect(await t.sql('SELECT status_callback FROM limit_requests WHERE id = $1', [lr])).toEqual([
      { status_callback: url },
    ]);
    expect(
      await t.sql('SELECT status_callback, loan_status_callback FROM withdrawal_requests WHERE id = $1', [w]),
    ).toEqual([{ status_callback: null, loan_status_callback: url }]);
  });
});
