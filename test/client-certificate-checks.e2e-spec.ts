import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DomainError } from '../src/platform/http/domain-error.js';
import { checkClientCertificate, ClientCertificateUpload } from '../src/partners/client-certificate.js';
import { Pem, TestCertificates } from './support/test-certificates.js';
import { harness, TestApp } from './support/harness.js';

// Certificates made here by openssl (test/support/test-certificates.ts), never checked in.
let certs: TestCertificates;
let ca: Pem;
let client: Pem;
let chained: string;
beforeAll(() => {
  certs = new TestCertificates();
  ca = certs.ca('partner-ca');
  client = certs.issue('acme-client', 'partner-ca', 'extendedKeyUsage=clientAuth');
  chained = `${client.certificate}${ca.certificate}`;
});
afterAll(() => certs?.close());

/** The refusal's code and message, or 'accepted'. */
function verdict(upload: ClientCertificateUpload): string {
  try {
    checkClientCertificate(upload, new Date());
    return 'accepted';
  } catch (e) {
    if (!(e instanceof DomainError)) throw e;
    expect(e.kind).toBe('rule');
    return `${e.code}: ${e.message}`;
  }
}

describe('checking a client certificate on upload (node:crypto only)', () => {
  it('accepts a leaf with its chain and key, and tells which certificate it is', () => {
    const checked = checkClientCertificate(
      { certificate: chained, privateKey: client.key, serverCa: ca.certificate },
      new Date(),
    );
    const leaf = new X509Certificate(client.certificate);
    expect(checked.info).toEqual({
      subject: 'O=Test, CN=acme-client',
      issuer: 'O=Test, CN=partner-ca',
      notAfter: new Date(leaf.validTo),
      fingerprint256: leaf.fingerprint256,
    });
    expect(checked.info.fingerprint256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(checked.certificate.match(/BEGIN CERTIFICATE/g)).toHaveLength(2);
    expect(checked.privateKey).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(checked.serverCa).toBe(ca.certificate.trim());
    // No extended key usage at all: any use, a client's included.
    expect(
      verdict({
        certificate: certs.issue('plain', 'partner-ca', 'basicConstraints=CA:FALSE').certificate,
        privateKey: readFileSync(certs.file('plain.key'), 'utf8'),
      }),
    ).toBe('accepted');
  });

  it.each<[string, (pem: { cert: string; key: string; ca: string }) => ClientCertificateUpload, string]>([
    [
      'a certificate that is not PEM',
      (p) => ({ certificate: 'MIIB not pem', privateKey: p.key }),
      'client_certificate_unreadable: certificate is not readable PEM',
    ],
    [
      'a corrupt PEM block',
      (p) => ({ certificate: p.cert.replace(/\n[A-Za-z0-9+/]{20}/, '\n!!!!'), privateKey: p.key }),
      'client_certificate_unreadable: certificate is not readable PEM',
    ],
    [
      'text around the certificates',
      (p) => ({ certificate: `subject=CN=x\n${p.cert}`, privateKey: p.key }),
      'client_certificate_unreadable: certificate is not readable PEM',
    ],
    [
      'a key that is not PEM',
      (p) => ({ certificate: p.cert, privateKey: 'secret' }),
      'client_certificate_unreadable: privateKey is not a readable PEM private key',
    ],
    [
      'a certificate given as the key',
      (p) => ({ certificate: p.cert, privateKey: p.cert }),
      'client_certificate_unreadable: privateKey is not a readable PEM private key',
    ],
    [
      'a serverCa that is not PEM',
      (p) => ({ certificate: p.cert, privateKey: p.key, serverCa: 'ca' }),
      'client_certificate_unreadable: serverCa is not readable PEM',
    ],
    [
      'an empty serverCa',
      (p) => ({ certificate: p.cert, privateKey: p.key, serverCa: '' }),
      'client_certificate_unreadable: serverCa is not readable PEM',
    ],
    [
      'a key followed by junk',
      (p) => ({ certificate: p.cert, privateKey: `${p.key}trailing junk\n` }),
      'client_certificate_unreadable: privateKey is not a readable PEM private key',
    ],
    [
      'a key with a certificate after it',
      (p) => ({ certificate: p.cert, privateKey: `${p.key}${p.cert}` }),
      'client_certificate_unreadable: privateKey is not a readable PEM private key',
    ],
    [
      'junk between the certificates',
      (p) => ({ certificate: `${p.cert}issuer=CN=partner-ca\n${p.cert}`, privateKey: p.key }),
      'client_certificate_unreadable: certificate is not readable PEM',
    ],
    [
      'a serverCa with a lone BEGIN after it',
      (p) => ({ certificate: p.cert, privateKey: p.key, serverCa: `${p.cert}-----BEGIN CERTIFICATE-----\n` }),
      'client_certificate_unreadable: serverCa is not readable PEM',
    ],
    [
      "another certificate's key",
      (p) => ({ certificate: p.cert, privateKey: p.ca }),
      'client_certificate_key_mismatch: privateKey does not match the certificate',
    ],
    [
      'the chain before the leaf',
      (p) => ({ certificate: `${readFileSync(certs.file('partner-ca.crt'), 'utf8')}${p.cert}`, privateKey: p.key }),
      'client_certificate_key_mismatch',
    ],
  ])('refuses %s with 422 naming it', (_what, upload, expected) => {
    const pem = { cert: client.certificate, key: client.key, ca: ca.key };
    expect(verdict(upload(pem))).toMatch(new RegExp(`^${expected.replace(/[.()]/g, '\\$&')}`));
  });

  it('takes whitespace around the blocks, CRLF line ends, and the EC PARAMETERS block openssl writes before an EC key', () => {
    const crlf = (pem: string) => `\r\n  ${pem.replace(/\n/g, '\r\n')}\r\n\t\n`;
    expect(verdict({ certificate: crlf(chained), privateKey: crlf(client.key), serverCa: crlf(ca.certificate) })).toBe(
      'accepted',
    );
    const params = execFileSync('openssl', ['ecparam', '-name', 'prime256v1'], { stdio: 'pipe' }).toString();
    const sec1 = execFileSync('openssl', ['ec', '-in', certs.file('acme-client.key')], { stdio: 'pipe' }).toString();
    expect(verdict({ certificate: client.certificate, privateKey: `${params}${sec1}` })).toBe('accepted');
  });

  it('refuses an expired certificate, one not valid yet, and a chain with an expired certificate, saying when', () => {
    const expired = certs.issue('expired-client', 'partner-ca', 'extendedKeyUsage=clientAuth', { days: -1 });
    expect(verdict({ certificate: expired.certificate, privateKey: expired.key })).toMatch(
      /^client_certificate_expired: certificate expired at \d{4}-\d\d-\d\dT/,
    );
    const early = certs.issue('early-client', 'partner-ca', 'extendedKeyUsage=clientAuth', { startDays: 2 });
    expect(verdict({ certificate: early.certificate, privateKey: early.key })).toMatch(
      /^client_certificate_not_yet_valid: certificate is not valid before \d{4}-/,
    );
    const oldCa = certs.issue('old-intermediate', 'partner-ca', 'basicConstraints=CA:TRUE', { days: -1 });
    expect(verdict({ certificate: `${client.certificate}${oldCa.certificate}`, privateKey: client.key })).toMatch(
      /^client_certificate_expired: certificate chain \(O=Test, CN=old-intermediate\) expired at /,
    );
  });

  it('refuses a certificate whose extended key usage does not allow client authentication', () => {
    const server = certs.issue('server-only', 'partner-ca', 'extendedKeyUsage=serverAuth');
    expect(verdict({ certificate: server.certificate, privateKey: server.key })).toMatch(
      /^client_certificate_not_for_clients: /,
    );
  });

  it('takes a key in any PEM form openssl writes (SEC 1 here) and stores it as PKCS#8', () => {
    const sec1 = execFileSync('openssl', ['ec', '-in', certs.file('acme-client.key')], { stdio: 'pipe' }).toString();
    expect(sec1).toMatch(/^-----BEGIN EC PRIVATE KEY-----/);
    expect(
      checkClientCertificate({ certificate: client.certificate, privateKey: sec1 }, new Date()).privateKey,
    ).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    const encrypted = execFileSync(
      'openssl',
      ['pkcs8', '-topk8', '-in', certs.file('acme-client.key'), '-passout', 'pass:secret'],
      { stdio: 'pipe' },
    ).toString();
    expect(verdict({ certificate: client.certificate, privateKey: encrypted })).toMatch(
      /^client_certificate_unreadable: privateKey .*encrypted/,
    );
  });
});

describe('PUT and DELETE /admin/v1/partners/{id}/client-certificate', () => {
  let t: TestApp;
  const e2e = harness({ ROLE: 'api' }, { partner: null });
  beforeAll(() => ({ t } = e2e));

  const partner = async () =>
    (await t.admin('post', '/admin/v1/partners', { name: 'TLS Bank' }).expect(201)).body as {
      id: string;
      apiKey: string;
    };
  const put = (id: string, body: object) => t.admin('put', `/admin/v1/partners/${id}/client-certificate`, body);
  const audit = async (id: string) =>
    (await t.admin('get', `/admin/v1/audit?targetId=${id}`).expect(200)).body.items as {
      action: string;
      before: object;
      after: object;
    }[];

  it('sets one: 200 with subject, issuer, notAfter and fingerprint256, the key sealed, never returned; the partner sees which', async () => {
    const p = await partner();
    const res = (
      await put(p.id, { certificate: chained, privateKey: client.key, serverCa: ca.certificate }).expect(200)
    ).body;
    const leaf = new X509Certificate(client.certificate);
    expect(res).toEqual({
      subject: 'O=Test, CN=acme-client',
      issuer: 'O=Test, CN=partner-ca',
      notAfter: new Date(leaf.validTo).toISOString(),
      fingerprint256: leaf.fingerprint256,
    });
    expect((await t.as(p.apiKey, 'get', '/v1/partner').expect(200)).body.clientCertificate).toEqual(res);
    const [row] = await t.sql<{ private_key: string; certificate: string; server_ca: string }>(
      'SELECT * FROM partner_client_certificates WHERE partner_id = $1',
      [p.id],
    );
    expect(row.private_key).toMatch(/^enc2:[0-9a-f]{8}:[A-Za-z0-9_-]+$/);
    expect(row.certificate).toContain('BEGIN CERTIFICATE');
    expect(row.server_ca).toBe(ca.certificate.trim());
    const entries = await audit(p.id);
    expect(entries[0]).toMatchObject({
      action: 'partner.client-certificate.set',
      before: { clientCertificate: null },
      after: { clientCertificate: { ...res, serverCa: true } },
    });
    const keyBody = client.key.split('\n')[1];
    expect(JSON.stringify([res, entries, (await t.as(p.apiKey, 'get', '/v1/partner')).body])).not.toContain(keyBody);
  });

  it('replaces one with a new upload id, and removes it: 204, then 404; the partner sees none', async () => {
    const p = await partner();
    await put(p.id, { certificate: client.certificate, privateKey: client.key }).expect(200);
    const first = (
      await t.sql<{ id: string }>('SELECT id FROM partner_client_certificates WHERE partner_id = $1', [p.id])
    )[0].id;
    await put(p.id, { certificate: client.certificate, privateKey: client.key }).expect(200);
    const second = (
      await t.sql<{ id: string }>('SELECT id FROM partner_client_certificates WHERE partner_id = $1', [p.id])
    )[0].id;
    expect(second).not.toBe(first);
    await t.admin('delete', `/admin/v1/partners/${p.id}/client-certificate`).expect(204);
    expect((await t.as(p.apiKey, 'get', '/v1/partner').expect(200)).body.clientCertificate).toBeNull();
    await t.admin('delete', `/admin/v1/partners/${p.id}/client-certificate`).expect(404);
    expect((await audit(p.id)).map((e) => e.action)).toEqual([
      'partner.client-certificate.delete',
      'partner.client-certificate.set',
      'partner.client-certificate.set',
      'partner.create',
    ]);
    expect((await audit(p.id))[0]).toMatchObject({
      before: { clientCertificate: { subject: 'O=Test, CN=acme-client', serverCa: false } },
      after: { clientCertificate: null },
    });
  });

  it('refuses with 422 naming which, storing nothing and writing no audit entry; 400 and 404 as any route', async () => {
    const p = await partner();
    const other = certs.issue('other-client', 'partner-ca', 'extendedKeyUsage=clientAuth');
    for (const [body, says] of [
      [{ certificate: client.certificate, privateKey: other.key }, 'privateKey does not match the certificate'],
      [{ certificate: 'nope', privateKey: client.key }, 'certificate is not readable PEM'],
      [{ certificate: client.certificate, privateKey: 'nope' }, 'privateKey is not a readable PEM private key'],
      [{ certificate: client.certificate, privateKey: client.key, serverCa: 'nope' }, 'serverCa is not readable PEM'],
      // Nothing but whitespace outside the PEM blocks, property by property.
      [
        { certificate: client.certificate, privateKey: `${client.key}junk\n` },
        'privateKey is not a readable PEM private key',
      ],
      [
        { certificate: `subject=CN=acme-client\n${client.certificate}`, privateKey: client.key },
        'certificate is not readable PEM',
      ],
      [
        { certificate: client.certificate, privateKey: client.key, serverCa: `${ca.certificate}junk` },
        'serverCa is not readable PEM',
      ],
      [
        {
          certificate: certs.issue('gone', 'partner-ca', '', { days: -1 }).certificate,
          privateKey: readFileSync(certs.file('gone.key'), 'utf8'),
        },
        'certificate expired at',
      ],
    ] as const) {
      expect((await put(p.id, body).expect(422)).body.message).toContain(says);
    }
    expect(await t.sql('SELECT 1 FROM partner_client_certificates WHERE partner_id = $1', [p.id])).toEqual([]);
    expect((await audit(p.id)).map((e) => e.action)).toEqual(['partner.create']);
    await put(p.id, { certificate: client.certificate }).expect(400);
    await put(p.id, { certificate: client.certificate, privateKey: client.key, extra: 1 }).expect(400);
    await put('00000000-0000-4000-8000-000000000000', {
      certificate: client.certificate,
      privateKey: client.key,
    }).expect(404);
  });

  it("exports each certificate's expiry as a gauge by partner id, read at scrape time", async () => {
    const p = await partner();
    await put(p.id, { certificate: client.certificate, privateKey: client.key }).expect(200);
    const metric = (text: string) =>
      new RegExp(
        `^funding_partner_client_certificate_expiry_timestamp_seconds\\{partner="${p.id}"\\} (\\S+)$`,
        'm',
      ).exec(text)?.[1];
    const expires = metric((await t.http().get('/metrics').expect(200)).text);
    expect(Number(expires)).toBe(new Date(new X509Certificate(client.certificate).validTo).getTime() / 1000);
    await t.admin('delete', `/admin/v1/partners/${p.id}/client-certificate`).expect(204);
    expect(metric((await t.http().get('/metrics').expect(200)).text)).toBeUndefined();
  });
});
