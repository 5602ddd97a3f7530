import { harness, TestApp } from './support/harness.js';

// Production defaults for URLs (https only, no private destinations): nothing here connects anywhere.
describe('the partner itself: GET and PATCH /v1/partner', () => {
  let t: TestApp;

  const e2e = harness(
    { ROLE: 'api', CALLBACK_ALLOW_HTTP: 'false', CALLBACK_ALLOW_PRIVATE_TARGETS: 'false' },
    { partner: null },
  );
  beforeAll(() => ({ t } = e2e));

  const create = async (body: object = {}) =>
    (await t.admin('post', '/admin/v1/partners', { name: 'Self Bank', ...body }).expect(201)).body as Record<
      string,
      string
    >;
  const me = async (apiKey: string) => (await t.as(apiKey, 'get', '/v1/partner').expect(200)).body;
  const endOverlap = (id: string) =>
    t.sql(`UPDATE partners SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`, [id]);

  it('shows an hmac-sha256 partner: no public keys, no operations URL, no client certificate', async () => {
    const p = await create();
    expect(await me(p.apiKey)).toEqual({
      id: p.id,
      name: 'Self Bank',
      signatureScheme: 'hmac-sha256',
      signingPublicKeys: [],
      operationsUrl: null,
      clientCertificate: null,
    });
    expect(JSON.stringify(await me(p.apiKey))).not.toContain('whsec_');
  });

  it('lists the whpk_ keys callbacks are signed with now: one, two during an overlap (current first), [] once hmac alone signs', async () => {
    const p = await create({ signatureScheme: 'ed25519' });
    expect(await me(p.apiKey)).toMatchObject({ signatureScheme: 'ed25519', signingPublicKeys: [p.signingPublicKey] });
    const rotated = (await t.admin('post', `/admin/v1/partners/${p.id}/rotate-signing-secret`).expect(200)).body
      .signingPublicKey;
    expect((await me(p.apiKey)).signingPublicKeys).toEqual([rotated, p.signingPublicKey]);
    await endOverlap(p.id);
    expect((await me(p.apiKey)).signingPublicKeys).toEqual([rotated]);
    await t.admin('post', `/admin/v1/partners/${p.id}/signature-scheme`, { scheme: 'hmac-sha256' }).expect(200);
    // The ed25519 key still signs beside the new secret for 24 h.
    expect(await me(p.apiKey)).toMatchObject({ signatureScheme: 'hmac-sha256', signingPublicKeys: [rotated] });
    await endOverlap(p.id);
    expect((await me(p.apiKey)).signingPublicKeys).toEqual([]);
    await t.admin('post', `/admin/v1/partners/${p.id}/signature-scheme`, { scheme: 'ed25519' }).expect(200);
    const [current] = (await me(p.apiKey)).signingPublicKeys;
    expect((await me(p.apiKey)).signingPublicKeys).toEqual([current]);
  });

  it('sets the operations URL in its normalised form, shows it, and removes it with null', async () => {
    const p = await create();
    const set = await t
      .as(p.apiKey, 'patch', '/v1/partner', { operationsUrl: 'https://93.184.215.14:8443/ops/../events' })
      .expect(200);
    expect(set.body).toMatchObject({ id: p.id, operationsUrl: 'https://93.184.215.14:8443/events' });
    expect((await me(p.apiKey)).operationsUrl).toBe('https://93.184.215.14:8443/events');
    const [row] = await t.sql<{ operations_url: string }>('SELECT operations_url FROM partners WHERE id = $1', [p.id]);
    expect(row.operations_url).toBe('https://93.184.215.14:8443/events');
    expect(
      (await t.as(p.apiKey, 'patch', '/v1/partner', { operationsUrl: null }).expect(200)).body.operationsUrl,
    ).toBeNull();
    expect((await me(p.apiKey)).operationsUrl).toBeNull();
  });

  it.each(
    [
      ['http://93.184.215.14/ops', 'https'],
      ['https://10.0.0.1/ops', 'private'],
      ['https://127.0.0.1/ops', 'loopback'],
      ['https://169.254.169.254/latest', 'link-local'],
      ['https://user:secret@93.184.215.14/ops', 'user information'],
      [`https://93.184.215.14/${'a'.repeat(2048)}`, '2048'],
      ['not a url', 'operationsUrl'],
    ].map(([url, why]) => [url.length > 60 ? `${url.slice(0, 30)}… (${url.length} chars)` : url, url, why]),
  )('refuses %s with 400 naming operationsUrl, as a callback URL, changing nothing', async (_label, url, why) => {
    const p = await create();
    await t.as(p.apiKey, 'patch', '/v1/partner', { operationsUrl: 'https://93.184.215.14/ops' }).expect(200);
    const message = (
      (await t.as(p.apiKey, 'patch', '/v1/partner', { operationsUrl: url }).expect(400)).body.message as string[]
    ).join(' ');
    expect(message).toContain('operationsUrl');
    expect(message).toContain(why);
    expect((await me(p.apiKey)).operationsUrl).toBe('https://93.184.215.14/ops');
  });

  it('refuses a body without operationsUrl, another property, or a non-string, with 400', async () => {
    const p = await create();
    for (const body of [
      {},
      { operationsUrl: 'https://93.184.215.14/ops', name: 'Renamed' },
      { signatureScheme: 'ed25519' },
      { operationsUrl: 7 },
    ]) {
      await t.as(p.apiKey, 'patch', '/v1/partner', body).expect(400);
    }
    expect(await me(p.apiKey)).toMatchObject({
      name: 'Self Bank',
      signatureScheme: 'hmac-sha256',
      operationsUrl: null,
    });
  });

  it('shows each partner only itself, and nobody without its API key', async () => {
    const a = await create();
    const b = await create({ name: 'Other Bank' });
    await t.as(a.apiKey, 'patch', '/v1/partner', { operationsUrl: 'https://93.184.215.14/a' }).expect(200);
    expect(await me(b.apiKey)).toMatchObject({ id: b.id, name: 'Other Bank', operationsUrl: null });
    await t.http().get('/v1/partner').expect(401);
    await t.as('fsk_not-a-key', 'patch', '/v1/partner', { operationsUrl: null }).expect(401);
    await t.admin('get', '/v1/partner').expect(401);
  });
});
