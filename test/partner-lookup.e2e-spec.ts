import request from 'supertest';
import { containsPattern } from '../src/partners/partner-directory.js';
import { PARTNER_PAGE } from '../src/partners/partner.repository.js';
import { PlanNode, scansOf } from './support/plans.js';
import { companyWithCallback, createPartner, harness, Partner, TestApp } from './support/harness.js';

interface View {
  id: string;
  name: string;
  createdAt: string;
  signatureScheme: string;
  operationsUrl: string | null;
  apiKeyRotatedAt: string | null;
  clientCertificate: { subject: string; notAfter: string } | null;
  destinations: { open: number; total: number };
}

/** How many partners the plans are checked over: a deployment's partner table at its largest expected size. */
const MANY = 10_000;
const NIL = '00000000-0000-4000-8000-000000000000';

describe('operators look a partner up: GET /admin/v1/partners and /admin/v1/partners/{partnerId}', () => {
  let t: TestApp;
  const made: Record<string, Partner & { signingPublicKey?: string }> = {};
  let viewer: string;

  const e2e = harness({ ROLE: 'api' }, { partner: null });
  beforeAll(async () => {
    ({ t } = e2e);
    // Oldest first: the list answers newest first.
    for (const name of ['Acme Bank', 'Zeta Payments', 'ACME Lending', '100%_Real Finance', 'Nordlicht Kredit']) {
      made[name] = await createPartner(t, name);
    }
    const ed = { name: 'Ed Signing', signatureScheme: 'ed25519' };
    made.Ed = (await t.admin('post', '/admin/v1/partners', ed).expect(201)).body;
    const night = { name: 'night-viewer', role: 'viewer' };
    viewer = (await t.admin('post', '/admin/v1/operators', night).expect(201)).body.token;
  });

  const get = (path: string, token = viewer) => t.as(token, 'get', path);
  type Page = { items: View[]; nextCursor: string | null };
  const list = async (query = '') => (await get(`/admin/v1/partners${query}`).expect(200)).body as Page;

  it('lists partners newest first, each with its account and destinations, to a viewer', async () => {
    const page = await list();
    const newestFirst = ['Ed Signing', 'Nordlicht Kredit', '100%_Real Finance', 'ACME Lending', 'Zeta Payments'];
    newestFirst.push('Acme Bank');
    expect(page.items.map((p) => p.name)).toEqual(newestFirst);
    expect(page.nextCursor).toBeNull();
    expect(page.items[0]).toEqual({
      id: made.Ed.id,
      name: 'Ed Signing',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      signatureScheme: 'ed25519',
      operationsUrl: null,
      apiKeyRotatedAt: null,
      clientCertificate: null,
      destinations: { open: 0, total: 0 },
    });
  });

  it('finds partners by a case-insensitive part of the name, taking % and _ literally', async () => {
    expect((await list('?name=acme')).items.map((p) => p.name)).toEqual(['ACME Lending', 'Acme Bank']);
    expect((await list('?name=LICHT%20K')).items.map((p) => p.name)).toEqual(['Nordlicht Kredit']);
    expect((await list('?name=%25')).items.map((p) => p.name)).toEqual(['100%_Real Finance']);
    expect((await list('?name=_')).items.map((p) => p.name)).toEqual(['100%_Real Finance']);
    expect((await list('?name=a%25b')).items).toEqual([]);
    expect((await list('?name=nobody')).items).toEqual([]);
  });

  it('pages with an opaque cursor until nextCursor is null, each partner once, in the same order', async () => {
    const all = (await list()).items.map((p) => p.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await list(`?limit=4${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.items.length).toBeLessThanOrEqual(4);
      seen.push(...page.items.map((p) => p.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all);
    const named = await list('?name=a&limit=1');
    const next = await list(`?name=a&limit=1&cursor=${named.nextCursor}`);
    expect([...named.items, ...next.items].map((p) => p.name)).toEqual(['100%_Real Finance', 'ACME Lending']);
  });

  it('shows one partner: key rotation, operations URL, certificate, its destinations open and in all', async () => {
    const p = made['Acme Bank'];
    await t.admin('post', `/admin/v1/partners/${p.id}/rotate-api-key`, { previousKeyValidHours: 0 }).expect(200);
    // A certificate as an upload stores it (test/client-certificate-checks.e2e-spec.ts uploads real
    // ones, with openssl): the view reads its columns.
    await t.sql(
      `INSERT INTO partner_client_certificates
         (partner_id, certificate, private_key, subject, issuer, not_after, fingerprint256)
       VALUES ($1, $2, 'enc2:k1:sealed-client-key', 'O=Test, CN=acme-client', 'O=Test, CN=partner-ca',
               now() + interval '90 days', $3)`,
      [p.id, '-----BEGIN CERTIFICATE-----\nMIIBacme\n-----END CERTIFICATE-----\n', Array(32).fill('AB').join(':')],
    );
    const zeta = made['Zeta Payments'];
    zeta.apiKey = (await t.admin('post', `/admin/v1/partners/${zeta.id}/rotate-api-key`, {}).expect(200)).body.apiKey;
    const operationsUrl = 'https://ops.zeta.example/events?token=z';
    await t.as(zeta.apiKey, 'patch', '/v1/partner', { operationsUrl }).expect(200);
    // ROLE=api: no worker sends them; each callback makes its destination known.
    for (const url of ['https://a.zeta.example/cb', 'https://b.zeta.example/cb']) {
      await (await companyWithCallback(t, zeta, url)).change();
    }
    await t.sql(
      `UPDATE destinations SET opened_at = now(), next_probe_at = now() + interval '1 hour'
        WHERE partner_id = $1 AND origin = 'https://a.zeta.example'`,
      [zeta.id],
    );

    const acme = (await get(`/admin/v1/partners/${p.id}`).expect(200)).body as View;
    const [{ rotated_at, not_after }] = await t.sql<{ rotated_at: Date; not_after: Date }>(
      `SELECT p.api_key_rotated_at AS rotated_at, c.not_after
         FROM partners p JOIN partner_client_certificates c ON c.partner_id = p.id WHERE p.id = $1`,
      [p.id],
    );
    expect(acme).toMatchObject({ name: 'Acme Bank', signatureScheme: 'hmac-sha256' });
    expect(acme.apiKeyRotatedAt).toBe(rotated_at.toISOString());
    expect(acme.destinations).toEqual({ open: 0, total: 0 });
    expect(acme.clientCertificate).toEqual({ subject: 'O=Test, CN=acme-client', notAfter: not_after.toISOString() });

    const shown = (await get(`/admin/v1/partners/${zeta.id}`).expect(200)).body as View;
    expect(shown).toMatchObject({ operationsUrl, destinations: { open: 1, total: 2 }, clientCertificate: null });
    expect((await list('?name=zeta')).items).toEqual([shown]);
  });

  it('never shows a secret, key, key hash or token in any field', async () => {
    const stored = await t.sql<Record<string, string | null>>(
      `SELECT p.api_key_hash, p.previous_api_key_hash, p.signing_secret, p.previous_signing_secret, c.private_key
         FROM partners p LEFT JOIN partner_client_certificates c ON c.partner_id = p.id`,
    );
    const secrets = [
      ...Object.values(made).flatMap((p) => [p.apiKey, p.signingSecret, p.signingPublicKey]),
      ...stored.flatMap((r) => Object.values(r)),
    ].filter((s): s is string => typeof s === 'string' && s.length > 0);
    expect(secrets.length).toBeGreaterThan(12);
    const bodies = [JSON.stringify(await list())];
    for (const p of Object.values(made)) bodies.push((await get(`/admin/v1/partners/${p.id}`).expect(200)).text);
    for (const body of bodies) {
      for (const s of secrets) expect(body).not.toContain(s);
      expect(body).not.toMatch(/whsec_|whsk_|whpk_|fsk_|fso_|PRIVATE KEY/);
    }
  });

  it('answers an unknown partner 404 and a malformed id 400 naming partnerId', async () => {
    const missing = await get('/admin/v1/partners/6b0f7d5e-51a4-4c39-9d9b-7a2fbbd0c001').expect(404);
    expect(missing.body).toMatchObject({ statusCode: 404, code: 'not_found' });
    expect((await get('/admin/v1/partners/not-a-uuid').expect(400)).body.message).toEqual(['partnerId must be a UUID']);
  });

  it.each([
    ['?limit=0', /^limit must not be less than 1$/],
    ['?limit=201', /^limit must not be greater than 200$/],
    ['?limit=ten', /^limit must be an integer number$/],
    ['?name=', /^name must be longer than or equal to 1 characters$/],
    [`?name=${'x'.repeat(201)}`, /^name must be shorter than or equal to 200 characters$/],
    ['?name=a%00b', /^name must not contain NUL characters$/],
    ['?cursor=bm90LWEtY3Vyc29y', /^cursor is not a cursor returned by this endpoint$/],
    ['?partnerId=x', /^query parameter partnerId is not accepted; accepted: name, limit, cursor$/],
  ])('refuses the list query %s with a 400 naming the parameter', async (query, message) => {
    const res = await get(`/admin/v1/partners${query}`).expect(400);
    expect(res.body.message).toEqual(expect.arrayContaining([expect.stringMatching(message)]));
  });

  it("refuses a query parameter on one partner's view, naming it", async () => {
    const res = await get(`/admin/v1/partners/${made.Ed.id}?verbose=1`).expect(400);
    expect(res.body.message).toEqual(['query parameter verbose is not accepted; this operation takes none']);
  });

  it('answers 401 without a credential or with a partner key, and 200 to every operator role', async () => {
    const raw = request(t.app.getHttpServer());
    for (const path of ['/admin/v1/partners', `/admin/v1/partners/${made.Ed.id}`]) {
      expect((await raw.get(path)).status).toBe(401);
      expect((await raw.get(path).set('Authorization', `Bearer ${made.Ed.apiKey}`)).status).toBe(401);
      await t.admin('get', path).expect(200);
      await get(path).expect(200);
    }
  });

  describe(`over ${MANY.toLocaleString('en')} partners`, () => {
    beforeAll(async () => {
      await t.sql(
        `INSERT INTO partners (name, api_key_hash, signing_secret, signature_scheme, created_at)
         SELECT 'Partner ' || g || CASE WHEN g = 4321 THEN ' Quokka Credit' ELSE '' END,
                md5(g::text), 's', 'hmac-sha256', now() - g * interval '1 minute'
           FROM generate_series(1, $1::int) g`,
        [MANY],
      );
      await t.sql('ANALYZE partners');
    }, 60_000);

    /** EXPLAIN ANALYZE of the list's statement as the service runs it (unnamed: planned for its values). */
    const explain = async (params: unknown[]): Promise<PlanNode> => {
      const sql = `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${PARTNER_PAGE}`;
      const [row] = await t.sql<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(sql, params);
      return row['QUERY PLAN'][0].Plan;
    };
    const partnersRead = (plan: PlanNode) => scansOf(plan, new Set(['partners']));

    it.each([
      ['the first page', [null, null, null, 51]],
      // Half of them older than the cursor.
      ['a page from a cursor deep in the list', [null, new Date(Date.now() - MANY * 30_000).toISOString(), NIL, 51]],
      ['a part of the name most partners have', [containsPattern('partner'), null, null, 51]],
      ['a part of the name one partner has', [containsPattern('quokka'), null, null, 51]],
      // Too short for a trigram: read along the list's order, stopped at the page (a common part, as short ones are).
      ['a part too short for trigrams', [containsPattern('pa'), null, null, 51]],
    ])('reads %s without reading every partner', async (_what, params) => {
      const scans = partnersRead(await explain(params));
      expect(scans.length).toBeGreaterThan(0);
      expect(scans.filter((s) => s.type === 'Seq Scan')).toEqual([]);
      // A page's worth of rows, and the matches of a rare name: never the table.
      expect(scans.reduce((n, s) => n + s.examined, 0)).toBeLessThanOrEqual(200);
    });

    it('finds the one partner by its name among them, through the API', async () => {
      expect((await list('?name=QUOKKA')).items.map((p) => p.name)).toEqual(['Partner 4321 Quokka Credit']);
      const first = await list('?limit=200');
      expect(first.items).toHaveLength(200);
      expect(first.nextCursor).not.toBeNull();
      expect(first.nextCursor).not.toContain(first.items[199].id);
    });
  });
});
