import { verify } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { ed25519PublicKey } from '../src/platform/crypto/signing-keys.js';
import { Received, Receiver, webhookHeaders } from './support/receiver.js';
import { createPartner, harness, Partner, TestApp, until } from './support/harness.js';

const v1Verifies = (hit: Received, secret: string) => {
  try {
    new Webhook(secret).verify(hit.body, webhookHeaders(hit.headers));
    return true;
  } catch {
    return false;
  }
};

const v1aVerifies = (hit: Received, whpk: string) => {
  const content = Buffer.from(
    `${String(hit.headers['webhook-id'])}.${String(hit.headers['webhook-timestamp'])}.${hit.body}`,
  );
  return String(hit.headers['webhook-signature'])
    .split(' ')
    .filter((s) => s.startsWith('v1a,'))
    .some((s) => verify(null, content, ed25519PublicKey(whpk), Buffer.from(s.slice(4), 'base64')));
};

interface AuditItem {
  action: string;
  operator: { id: string; name: string } | null;
  partner: { id: string; name: string } | null;
  targetType: string;
  targetId: string;
  before: Record<string, unknown>;
  after: Record<string, unknown>;
}

/**
 * A partner rolls its own signing key (POST /v1/partner/rotate-signing-secret and
 * /v1/partner/signature-scheme): the operators' rotation, with the partner as the audit entry's
 * actor; the next callback verifies with the new key and, within the overlap, with the old.
 */
describe("a partner's own signing key", () => {
  let t: TestApp;
  let rx: Receiver;
  let n = 0;
  const e2e = harness({}, { partner: null });
  beforeAll(() => ({ t, rx } = e2e));

  /** One callback of the partner, recorded now and received. */
  async function callback(p: Partner): Promise<Received> {
    const path = `/signing/${++n}`;
    const c = (
      await t.as(p.apiKey, 'post', '/v1/companies', { name: 'Acme', status_callback: rx.url(path) }).expect(201)
    ).body.id;
    await t.admin('patch', `/admin/v1/companies/${c}/credit`, { creditStatus: 'closed' }).expect(200);
    const [hit] = await until(() => (rx.on(path).length ? rx.on(path) : null), { what: `the callback at ${path}` });
    return hit;
  }
  /** The partner's audit entries, newest first, but its creation's. */
  const audit = async (p: Partner) =>
    (
      (await t.admin('get', `/admin/v1/audit?targetType=partner&targetId=${p.id}`).expect(200)).body
        .items as AuditItem[]
    ).filter((e) => e.action !== 'partner.create');

  it('rolls its secret: callbacks verify with the new and, for 24 h, the old; the partner audited', async () => {
    const p = await createPartner(t, 'Rolling Bank');
    const bystander = await createPartner(t, 'Bystander Bank');
    const res = await t.as(p.apiKey, 'post', '/v1/partner/rotate-signing-secret').expect(200);
    expect(Object.keys(res.body)).toEqual(['signingSecret']);
    const secret = res.body.signingSecret as string;
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(p.signingSecret);

    const hit = await callback(p);
    expect(String(hit.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(v1Verifies(hit, secret)).toBe(true);
    expect(v1Verifies(hit, p.signingSecret)).toBe(true);
    // The other partner's key is its own, untouched.
    expect(v1Verifies(await callback(bystander), bystander.signingSecret)).toBe(true);

    const [entry] = await audit(p);
    expect(entry).toMatchObject({
      action: 'partner.signing-secret.rotate',
      operator: null,
      partner: { id: p.id, name: 'Rolling Bank' },
      targetType: 'partner',
      targetId: p.id,
    });
    expect(entry.after).toMatchObject({ signingSecretRotated: true, previousSecretExpiresAt: expect.any(String) });
    expect(JSON.stringify(entry)).not.toContain(secret.slice(6, 20));
    expect(await audit(bystander)).toEqual([]);
  });

  it('switches to ed25519 and back: v1a by the new key, v1 by the old; the same scheme 409, unaudited', async () => {
    const p = await createPartner(t, 'Switching Bank');
    const res = await t.as(p.apiKey, 'post', '/v1/partner/signature-scheme', { scheme: 'ed25519' }).expect(200);
    expect(res.body).toEqual({ signatureScheme: 'ed25519', signingPublicKey: expect.stringMatching(/^whpk_/) });
    const whpk = res.body.signingPublicKey as string;
    expect((await t.as(p.apiKey, 'get', '/v1/partner').expect(200)).body.signingPublicKeys).toEqual([whpk]);

    const hit = await callback(p);
    expect(
      String(hit.headers['webhook-signature'])
        .split(' ')
        .map((s) => s.split(',')[0]),
    ).toEqual(['v1a', 'v1']);
    expect(v1aVerifies(hit, whpk)).toBe(true);
    expect(v1Verifies(hit, p.signingSecret)).toBe(true);

    const again = await t.as(p.apiKey, 'post', '/v1/partner/signature-scheme', { scheme: 'ed25519' }).expect(409);
    expect(again.body.code).toBe('signature_scheme_unchanged');
    const entries = await audit(p);
    expect(entries.map((e) => [e.action, e.partner?.id, e.operator])).toEqual([
      ['partner.signature-scheme.switch', p.id, null],
    ]);
    expect(entries[0]).toMatchObject({
      before: { signatureScheme: 'hmac-sha256' },
      after: { signatureScheme: 'ed25519' },
    });

    const back = await t.as(p.apiKey, 'post', '/v1/partner/signature-scheme', { scheme: 'hmac-sha256' }).expect(200);
    expect(Object.keys(back.body)).toEqual(['signatureScheme', 'signingSecret']);
    const next = await callback(p);
    expect(v1Verifies(next, back.body.signingSecret)).toBe(true);
    expect(v1aVerifies(next, whpk)).toBe(true);
  });

  it('refuses a bad body naming the field; a retry with its Idempotency-Key gets the first key', async () => {
    const p = await createPartner(t, 'Careful Bank');
    for (const [body, field] of [
      [{ scheme: 'rsa' }, 'scheme'],
      [{}, 'scheme'],
      [{ scheme: 'ed25519', extra: 1 }, 'extra'],
    ] as const) {
      const res = await t.as(p.apiKey, 'post', '/v1/partner/signature-scheme', body).expect(400);
      expect(res.body.message.join(' ')).toContain(field);
    }
    await t.as(p.apiKey, 'post', '/v1/partner/rotate-signing-secret', { extra: 1 }).expect(400);
    expect(await audit(p)).toEqual([]);

    const first = await t
      .as(p.apiKey, 'post', '/v1/partner/rotate-signing-secret')
      .set('Idempotency-Key', 'roll-1')
      .expect(200);
    const retry = await t
      .as(p.apiKey, 'post', '/v1/partner/rotate-signing-secret')
      .set('Idempotency-Key', 'roll-1')
      .expect(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(await audit(p)).toHaveLength(1);
    // The operators' route rolls the same key, through the same service: the partner's then signs alongside.
    const byOperator = await t.admin('post', `/admin/v1/partners/${p.id}/rotate-signing-secret`).expect(200);
    const hit = await callback(p);
    expect(v1Verifies(hit, byOperator.body.signingSecret)).toBe(true);
    expect(v1Verifies(hit, first.body.signingSecret)).toBe(true);
    expect((await audit(p)).map((e) => [e.action, e.operator?.name ?? null, e.partner?.name ?? null])).toEqual([
      ['partner.signing-secret.rotate', 'admin', null],
      ['partner.signing-secret.rotate', null, 'Careful Bank'],
    ]);
  });
});
