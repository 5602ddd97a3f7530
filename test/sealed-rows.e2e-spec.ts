/**
 * Sealed values bound to their row (docs/security.md, "Secrets at rest"): a partner's signing key
 * or client key copied in SQL into another partner's row does not open there, so nothing is
 * signed or presented with it; the service goes on (no 5xx), logging the row. SECRETS_KEY
 * rotation re-seals each row's own values, and the migration converts the form before.
 */
import { ConsoleLogger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Webhook } from 'standardwebhooks';
import { keyId, SecretBox } from '../src/platform/crypto/secret-box.js';
import { SealedValuesBoundToRows1764700100000 } from '../src/platform/database/migrations/1764700100000-sealed-values-bound-to-rows.js';
import { SecretsReencryption } from '../src/partners/secrets-reencryption.js';
import { LEASE_MARGIN_MS } from '../src/delivery/admission.js';
import { webhookHeaders } from './support/receiver.js';
import { TestCertificates } from './support/test-certificates.js';
import { companyWithCallback, createPartner, harness, until } from './support/harness.js';

const OLD = 'old-secrets-key-for-the-sealed-rows-test-01';
const NEW = 'new-secrets-key-for-the-sealed-rows-test-02';
/** The attempts' timeout: a callback not sent holds its lease for this and LEASE_MARGIN_MS. */
const TIMEOUT_MS = 2000;

/** The lines the service logs, as it would print them. */
class CapturingLogger extends ConsoleLogger {
  readonly lines: string[] = [];
  constructor() {
    super({ logLevels: ['error', 'warn', 'log'] });
  }
  protected printMessages(messages: unknown[], context = '', logLevel = 'log'): void {
    for (const m of messages)
      this.lines.push(`${logLevel} [${context}] ${typeof m === 'string' ? m : JSON.stringify(m)}`);
  }
}

describe('sealed values bound to their row', () => {
  const e2e = harness({ SECRETS_KEY: `${NEW},${OLD}`, CALLBACK_TIMEOUT_MS: String(TIMEOUT_MS) });
  const logger = new CapturingLogger();
  let certs: TestCertificates;
  beforeAll(() => {
    e2e.t.app.useLogger(logger);
    certs = new TestCertificates();
    certs.ca('partner-ca');
  });
  afterAll(() => certs?.close());

  const logged = (text: string) =>
    until(() => logger.lines.find((l) => l.includes(text)), { what: `a log line with ${text}`, timeoutMs: 15_000 });
  const column = async (sql: string, id: string) => Object.values((await e2e.t.sql(sql, [id]))[0])[0] as string;
  const signingSecretOf = (id: string) => column('SELECT signing_secret FROM partners WHERE id = $1', id);
  const clientKeyOf = (id: string) =>
    column('SELECT private_key FROM partner_client_certificates WHERE partner_id = $1', id);

  it("signs nothing with a partner's signing key copied into another partner's row; the API goes on", async () => {
    const { t, p, rx } = e2e;
    const victim = await createPartner(t, 'Victim Bank');
    await t.sql(
      'UPDATE partners SET signing_secret = (SELECT signing_secret FROM partners WHERE id = $1) WHERE id = $2',
      [p.id, victim.id],
    );
    const copied = await companyWithCallback(t, victim, rx.url('/copied'));
    const stuck = await copied.change();
    const own = await companyWithCallback(t, p, rx.url('/own'));
    await own.change();

    // The key's own partner is delivered, signed with its key; the copy is never used.
    const [hit] = await until(() => (rx.on('/own').length ? rx.on('/own') : null), {
      what: 'the own partner delivered',
    });
    expect(() => new Webhook(p.signingSecret).verify(hit.body, webhookHeaders(hit.headers))).not.toThrow();
    await logged(`callback ${stuck} not sent: partners.signing_secret of row "${victim.id}" does not open`);
    expect(rx.on('/copied')).toEqual([]);
    expect((await t.admin('get', `/admin/v1/callbacks/${stuck}`).expect(200)).body).toMatchObject({
      status: 'pending',
      attempts: [],
    });
    await t.as(victim.apiKey, 'get', '/v1/partner').expect(200);
    await t.as(victim.apiKey, 'post', '/v1/companies', { name: 'Still served' }).expect(201);

    // A rotation repairs it: the new key signs alone (the copy, now the previous key, is left out). The
    // callback that was not sent holds its new destination's window of one until its lease lapses; then
    // it and the next are delivered.
    const { signingSecret } = (
      await t.admin('post', `/admin/v1/partners/${victim.id}/rotate-signing-secret`).expect(200)
    ).body;
    const next = await copied.change();
    const repaired = await until(() => (rx.on('/copied').length === 2 ? rx.on('/copied') : null), {
      what: 'the victim delivered after a rotation',
      timeoutMs: TIMEOUT_MS + LEASE_MARGIN_MS + 15_000,
    });
    expect(repaired.map((h) => h.headers['webhook-id']).sort()).toEqual([stuck, next].sort());
    for (const hit of repaired) {
      expect(hit.headers['webhook-signature']).not.toContain(' ');
      expect(() => new Webhook(signingSecret).verify(hit.body, webhookHeaders(hit.headers))).not.toThrow();
    }
  }, 90_000);

  it("presents no partner's client key copied into another partner's row: its callbacks wait, logged", async () => {
    const { t, p, rx } = e2e;
    const upload = (name: string) => {
      const leaf = certs.issue(name, 'partner-ca', 'extendedKeyUsage=clientAuth');
      return { certificate: leaf.certificate, privateKey: leaf.key };
    };
    const victim = await createPartner(t, 'Victim TLS Bank');
    await t.admin('put', `/admin/v1/partners/${p.id}/client-certificate`, upload('owner-client')).expect(200);
    await t.admin('put', `/admin/v1/partners/${victim.id}/client-certificate`, upload('victim-client')).expect(200);
    await t.sql('UPDATE partner_client_certificates SET private_key = $1 WHERE partner_id = $2', [
      await clientKeyOf(p.id),
      victim.id,
    ]);
    const stuck = await (await companyWithCallback(t, victim, rx.url('/copied-key'))).change();
    await (await companyWithCallback(t, p, rx.url('/own-key'))).change();

    await until(() => rx.on('/own-key').length > 0, { what: 'the own partner delivered' });
    await logged(
      `callback ${stuck} not sent: its partner's client certificate could not be read: partner_client_certificates.private_key of row "${victim.id}" does not open`,
    );
    expect(rx.on('/copied-key')).toEqual([]);
    await t.admin('delete', `/admin/v1/partners/${p.id}/client-certificate`).expect(204);
  }, 30_000);

  it("never replays another caller's idempotent response copied into its row: 409, not 5xx", async () => {
    const { t, p } = e2e;
    const victim = await createPartner(t, 'Victim Idempotent Bank');
    const body = { name: 'Twice' };
    await t.as(p.apiKey, 'post', '/v1/companies', body).set('Idempotency-Key', 'same-key').expect(201);
    await t.sql(
      `INSERT INTO idempotency_keys (scope, key, request_hash, status_code, response)
       SELECT $2, key, request_hash, status_code, response FROM idempotency_keys WHERE scope = $1 AND key = 'same-key'`,
      [p.id, victim.id],
    );
    const res = await t.as(victim.apiKey, 'post', '/v1/companies', body).set('Idempotency-Key', 'same-key').expect(409);
    expect(res.body.code).toBe('idempotency_key_in_use');
    await logged(`idempotency_keys.response of row "${victim.id} same-key" does not open`);
  });

  it("re-seals each row's own values on a SECRETS_KEY rotation, leaving a copied one as it is, logged, and starting", async () => {
    const { t } = e2e;
    const owner = await createPartner(t, 'Rotated Owner');
    const other = await createPartner(t, 'Rotated Other');
    const oldBox = new SecretBox([OLD]);
    const ownSealed = oldBox.seal(owner.signingSecret, 'partners.signing_secret', owner.id);
    await t.sql('UPDATE partners SET signing_secret = $1 WHERE id = $2', [ownSealed, owner.id]);
    await t.sql('UPDATE partners SET signing_secret = $1 WHERE id = $2', [ownSealed, other.id]);

    await t.app.get(SecretsReencryption).onApplicationBootstrap();
    const resealed = await signingSecretOf(owner.id);
    expect(resealed.startsWith(`enc2:${keyId(NEW)}:`)).toBe(true);
    expect(new SecretBox([NEW]).open(resealed, 'partners.signing_secret', owner.id)).toBe(owner.signingSecret);
    expect(await signingSecretOf(other.id)).toBe(ownSealed);
    expect(
      logger.lines.some((l) =>
        l.includes(`signing_secret left as it is: partners.signing_secret of row "${other.id}" does not open`),
      ),
    ).toBe(true);
    await t.sql('UPDATE partners SET signing_secret = $1 WHERE id = $2', [resealed, other.id]); // no key of an older SECRETS_KEY left behind
  });

  it('migrates values sealed before (bound to their column only) to the form bound to their row, all or none, and again changes nothing', async () => {
    const { t } = e2e;
    const db = t.app.get(DataSource);
    const migration = new SealedValuesBoundToRows1764700100000();
    const oldBox = new SecretBox([OLD]);
    const partner = await createPartner(t, 'Migrated Bank');
    const key = '-----BEGIN PRIVATE KEY-----\nnot-a-real-key\n-----END PRIVATE KEY-----';
    await t.sql('UPDATE partners SET signing_secret = $1, previous_signing_secret = $2 WHERE id = $3', [
      oldBox.sealUnbound(partner.signingSecret, 'partners.signing_secret'),
      oldBox.sealUnbound('whsec_previous', 'partners.signing_secret'),
      partner.id,
    ]);
    await t.sql(
      `INSERT INTO partner_client_certificates (partner_id, certificate, private_key, subject, issuer, not_after, fingerprint256)
       VALUES ($1, 'pem', $2, 'CN=x', 'CN=ca', now() + interval '30 days', 'AB')`,
      [partner.id, oldBox.sealUnbound(key, 'partners.client_key')],
    );
    await t.sql(
      `INSERT INTO idempotency_keys (scope, key, request_hash, status_code, response) VALUES ($1, 'create 1', 'h', 201, $2)`,
      [partner.id, oldBox.sealUnbound('{"id":"x"}', 'idempotency_keys.response')],
    );
    const before = await signingSecretOf(partner.id);

    // A value sealed with a key SECRETS_KEY lacks stops it, and nothing is converted.
    const stranger = await createPartner(t, 'Stranger Bank');
    await t.sql('UPDATE partners SET signing_secret = $1 WHERE id = $2', [
      new SecretBox(['a-key-nobody-configured-here-000000000']).sealUnbound('whsec_x', 'partners.signing_secret'),
      stranger.id,
    ]);
    const run = async (step: 'up' | 'down') => {
      const q = db.createQueryRunner();
      await q.startTransaction();
      try {
        await migration[step](q);
        await q.commitTransaction();
      } catch (e) {
        await q.rollbackTransaction();
        throw e;
      } finally {
        await q.release();
      }
    };
    await expect(run('up')).rejects.toThrow('which SECRETS_KEY does not list');
    expect(await signingSecretOf(partner.id)).toBe(before);
    await t.sql('DELETE FROM partners WHERE id = $1', [stranger.id]);

    await run('up');
    const box = new SecretBox([NEW]);
    const [row] = await t.sql<{
      signing_secret: string;
      previous_signing_secret: string;
      private_key: string;
      response: string;
    }>(
      `SELECT p.signing_secret, p.previous_signing_secret, c.private_key, i.response FROM partners p
         JOIN partner_client_certificates c ON c.partner_id = p.id JOIN idempotency_keys i ON i.scope = p.id::text WHERE p.id = $1`,
      [partner.id],
    );
    for (const value of Object.values(row)) expect(value).toMatch(new RegExp(`^enc2:${keyId(NEW)}:`));
    expect(box.open(row.signing_secret, 'partners.signing_secret', partner.id)).toBe(partner.signingSecret);
    expect(box.open(row.previous_signing_secret, 'partners.signing_secret', partner.id)).toBe('whsec_previous');
    expect(box.open(row.private_key, 'partner_client_certificates.private_key', partner.id)).toBe(key);
    expect(box.open(row.response, 'idempotency_keys.response', `${partner.id} create 1`)).toBe('{"id":"x"}');

    await run('up');
    expect(await signingSecretOf(partner.id)).toBe(row.signing_secret);
    // And back, for a downgrade: the form before, which the migration converts again.
    await run('down');
    expect(box.openUnbound(await signingSecretOf(partner.id), 'partners.signing_secret')).toBe(partner.signingSecret);
    await run('up');
    expect(box.open(await signingSecretOf(partner.id), 'partners.signing_secret', partner.id)).toBe(
      partner.signingSecret,
    );
    await t.sql('DELETE FROM partner_client_certificates WHERE partner_id = $1', [partner.id]);
  });
});
