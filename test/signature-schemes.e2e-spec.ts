import { verify } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { SecretBox } from '../src/platform/crypto/secret-box.js';
import { ed25519PublicKey } from '../src/platform/crypto/signing-keys.js';
import { fencedBlocks } from './support/doc-blocks.js';
import { Receiver, Received, webhookHeaders } from './support/receiver.js';
import { harness, TestApp, until } from './support/harness.js';

/** Whether a v1a entry of the hit's signature list verifies with the whpk_ key (crypto.verify(null, …), as a receiver does). */
function v1aVerifies(hit: Received, whpk: string): boolean {
  const content = Buffer.from(
    `${String(hit.headers['webhook-id'])}.${String(hit.headers['webhook-timestamp'])}.${hit.body}`,
  );
  return String(hit.headers['webhook-signature'])
    .split(' ')
    .filter((s) => s.startsWith('v1a,'))
    .some((s) => verify(null, content, ed25519PublicKey(whpk), Buffer.from(s.slice(4), 'base64')));
}

/** Whether a v1 entry verifies with the whsec_ secret (the standardwebhooks package). */
function v1Verifies(hit: Received, secret: string): boolean {
  try {
    new Webhook(secret).verify(hit.body, webhookHeaders(hit.headers));
    return true;
  } catch {
    return false;
  }
}

/** docs/partners.md's Node verifier of v1a signatures, as written. */
type VerifyV1a = (whpk: string, headers: Received['headers'], rawBody: string) => boolean;
const docsVerifyV1a = (): VerifyV1a => {
  const block = fencedBlocks('docs/partners.md').find((b) => b.lang === 'js' && b.code.includes('function verifyV1a'));
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the guide's verifier, run as a reader copies it
  return new Function('require', `${block!.code}\nreturn verifyV1a;`)(require) as VerifyV1a;
};

const schemes = (hit: Received) =>
  String(hit.headers['webhook-signature'])
    .split(' ')
    .map((s) => s.split(',')[0]);

describe('signature schemes: hmac-sha256 (v1) and ed25519 (v1a)', () => {
  let t: TestApp;
  let rx: Receiver;
  let n = 0;

  const e2e = harness({}, { partner: null });
  beforeAll(() => ({ t, rx } = e2e));

  async function partner(body: object) {
    return (await t.admin('post', '/admin/v1/partners', { name: 'Signing Bank', ...body }).expect(201)).body as Record<
      string,
      string
    >;
  }

  /** One callback of the partner, recorded now and received. */
  async function callback(apiKey: string): Promise<Received> {
    const path = `/cb/${++n}`;
    const c = (await t.as(apiKey, 'post', '/v1/companies', { name: 'Acme', status_callback: rx.url(path) }).expect(201))
      .body.id;
    await t.admin('patch', `/admin/v1/companies/${c}/credit`, { creditStatus: 'closed' }).expect(200);
    const [hit] = await until(() => (rx.on(path).length ? rx.on(path) : null), { what: `the callback at ${path}` });
    return hit;
  }

  const stored = async (id: string) =>
    (
      await t.sql<{ signing_secret: string; previous_signing_secret: string | null }>(
        'SELECT signing_secret, previous_signing_secret FROM partners WHERE id = $1',
        [id],
      )
    )[0];
  const endOverlap = (id: string) =>
    t.sql(`UPDATE partners SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`, [id]);

  it('creates an ed25519 partner with signingPublicKey (whpk_, 32 raw bytes) in place of signingSecret, its private key sealed', async () => {
    const p = await partner({ signatureScheme: 'ed25519' });
    expect(Object.keys(p)).toEqual(['id', 'name', 'apiKey', 'signingPublicKey', 'createdAt']);
    expect(p.signingPublicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(p.signingPublicKey.slice(5), 'base64')).toHaveLength(32);
    const row = await stored(p.id);
    expect(row.signing_secret).toMatch(/^enc2:/);
    expect(new SecretBox(t.config.secretsKeys).open(row.signing_secret, 'partners.signing_secret', p.id)).toMatch(
      /^whsk_/,
    );
  });

  it('creates hmac-sha256 partners by default and when asked, as before', async () => {
    for (const body of [{}, { signatureScheme: 'hmac-sha256' }]) {
      const p = await partner(body);
      expect(Object.keys(p)).toEqual(['id', 'name', 'apiKey', 'signingSecret', 'createdAt']);
      expect(p.signingSecret).toMatch(/^whsec_/);
    }
    await t.admin('post', '/admin/v1/partners', { name: 'X', signatureScheme: 'rsa' }).expect(400);
  });

  it('signs an ed25519 partner’s callbacks with v1a alone, verifiable with crypto.verify(null, …) and the whpk_ key', async () => {
    const p = await partner({ signatureScheme: 'ed25519' });
    const hit = await callback(p.apiKey);
    expect(schemes(hit)).toEqual(['v1a']);
    expect(v1aVerifies(hit, p.signingPublicKey)).toBe(true);
    expect(v1aVerifies({ ...hit, body: hit.body.replace('"message":0', '"message":2') }, p.signingPublicKey)).toBe(
      false,
    );
    const other = await partner({ signatureScheme: 'ed25519' });
    expect(v1aVerifies(hit, other.signingPublicKey)).toBe(false);
  });

  it("verifies with docs/partners.md's Node function and the key GET /v1/partner lists, during an overlap too", async () => {
    const verifyV1a = docsVerifyV1a();
    const p = await partner({ signatureScheme: 'ed25519' });
    const hit = await callback(p.apiKey);
    const [listed] = (await t.as(p.apiKey, 'get', '/v1/partner').expect(200)).body.signingPublicKeys;
    expect(listed).toBe(p.signingPublicKey);
    expect(verifyV1a(listed, hit.headers, hit.body)).toBe(true);
    expect(verifyV1a(listed, hit.headers, `${hit.body} `)).toBe(false);
    expect(
      verifyV1a(
        listed,
        { ...hit.headers, 'webhook-timestamp': String(Number(hit.headers['webhook-timestamp']) - 600) },
        hit.body,
      ),
    ).toBe(false);
    await t.admin('post', `/admin/v1/partners/${p.id}/rotate-signing-secret`).expect(200);
    const during = await callback(p.apiKey);
    for (const key of (await t.as(p.apiKey, 'get', '/v1/partner').expect(200)).body.signingPublicKeys)
      expect(verifyV1a(key, during.headers, during.body)).toBe(true);
  });

  it('switches hmac-sha256 → ed25519: both signatures for 24 h, then v1a alone', async () => {
    const p = await partner({});
    const res = (
      await t.admin('post', `/admin/v1/partners/${p.id}/signature-scheme`, { scheme: 'ed25519' }).expect(200)
    ).body;
    expect(Object.keys(res)).toEqual(['signatureScheme', 'signingPublicKey']);
    expect(res.signatureScheme).toBe('ed25519');
    const during = await callback(p.apiKey);
    expect(schemes(during)).toEqual(['v1a', 'v1']);
    expect(v1aVerifies(during, res.signingPublicKey)).toBe(true);
    expect(v1Verifies(during, p.signingSecret)).toBe(true);
    const [{ ends }] = await t.sql<{ ends: Date }>(
      'SELECT previous_secret_expires_at AS ends FROM partners WHERE id = $1',
      [p.id],
    );
    expect(Math.abs(ends.getTime() - Date.now() - 24 * 3600 * 1000)).toBeLessThan(60_000);
    await endOverlap(p.id);
    const after = await callback(p.apiKey);
    expect(schemes(after)).toEqual(['v1a']);
    expect(v1aVerifies(after, res.signingPublicKey)).toBe(true);
  });

  it('switches ed25519 → hmac-sha256: a new whsec_ secret, both signatures for 24 h, then v1 alone', async () => {
    const p = await partner({ signatureScheme: 'ed25519' });
    const res = (
      await t.admin('post', `/admin/v1/partners/${p.id}/signature-scheme`, { scheme: 'hmac-sha256' }).expect(200)
    ).body;
    expect(Object.keys(res)).toEqual(['signatureScheme', 'signingSecret']);
    expect(res).toMatchObject({ signatureScheme: 'hmac-sha256', signingSecret: expect.stringMatching(/^whsec_/) });
    const during = await callback(p.apiKey);
    expect(schemes(during)).toEqual(['v1', 'v1a']);
    expect(v1Verifies(during, res.signingSecret)).toBe(true);
    expect(v1aVerifies(during, p.signingPublicKey)).toBe(true);
    await endOverlap(p.id);
    const after = await callback(p.apiKey);
    expect(schemes(after)).toEqual(['v1']);
    expect(v1Verifies(after, res.signingSecret)).toBe(true);
  });

  it('refuses a switch to the scheme in use with 409, changing nothing and writing no audit entry', async () => {
    const p = await partner({ signatureScheme: 'ed25519' });
    const before = await stored(p.id);
    const entries = async () => (await t.sql('SELECT 1 FROM audit_entries WHERE target_id = $1', [p.id])).length;
    const count = await entries();
    const res = await t.admin('post', `/admin/v1/partners/${p.id}/signature-scheme`, { scheme: 'ed25519' }).expect(409);
    expect(res.body.message).toContain('ed25519');
    expect(await stored(p.id)).toEqual(before);
    expect(await entries()).toBe(count);
    await t.admin('post', `/admin/v1/partners/${p.id}/signature-scheme`, { scheme: 'none' }).expect(400);
    await t.admin('post', `/admin/v1/partners/${p.id}/signature-scheme`, {}).expect(400);
    await t
      .admin('post', '/admin/v1/partners/00000000-0000-4000-8000-000000000000/signature-scheme', {
        scheme: 'hmac-sha256',
      })
      .expect(404);
  });

  it('rotates an ed25519 partner to a new key pair: {signingPublicKey}; callbacks carry both v1a for 24 h', async () => {
    const p = await partner({ signatureScheme: 'ed25519' });
    const res = (await t.admin('post', `/admin/v1/partners/${p.id}/rotate-signing-secret`).expect(200)).body;
    expect(Object.keys(res)).toEqual(['signingPublicKey']);
    expect(res.signingPublicKey).not.toBe(p.signingPublicKey);
    const during = await callback(p.apiKey);
    expect(schemes(during)).toEqual(['v1a', 'v1a']);
    for (const key of [res.signingPublicKey, p.signingPublicKey]) expect(v1aVerifies(during, key)).toBe(true);
    await endOverlap(p.id);
    const after = await callback(p.apiKey);
    expect(schemes(after)).toEqual(['v1a']);
    expect(v1aVerifies(after, res.signingPublicKey)).toBe(true);
    expect(v1aVerifies(after, p.signingPublicKey)).toBe(false);
  });

  it('audits creations, switches and rotations with the scheme and the overlap, never a key', async () => {
    const p = await partner({ signatureScheme: 'ed25519' });
    await t.admin('post', `/admin/v1/partners/${p.id}/signature-scheme`, { scheme: 'hmac-sha256' }).expect(200);
    await t.admin('post', `/admin/v1/partners/${p.id}/rotate-signing-secret`).expect(200);
    const items = (await t.admin('get', `/admin/v1/audit?targetId=${p.id}`).expect(200)).body.items as {
      action: string;
      before: object;
      after: object;
    }[];
    expect(items.map((i) => i.action)).toEqual([
      'partner.signing-secret.rotate',
      'partner.signature-scheme.switch',
      'partner.create',
    ]);
    expect(items[1]).toMatchObject({
      before: { signatureScheme: 'ed25519', previousSecretExpiresAt: null },
      after: { signatureScheme: 'hmac-sha256', previousSecretExpiresAt: expect.any(String) },
    });
    expect(items[2].after).toEqual({ name: 'Signing Bank', signatureScheme: 'ed25519' });
    expect(JSON.stringify(items)).not.toMatch(/wh(sec|sk|pk)_/);
  });
});
