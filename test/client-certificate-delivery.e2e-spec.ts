import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net, { AddressInfo } from 'node:net';
import type { SecureVersion } from 'node:tls';
import { loadConfig } from '../src/platform/config/app-config.js';
import { CallbackSender } from '../src/egress/callback-sender.js';
import { buildService, startService, stop, workerEnv } from './support/processes.js';
import { Receiver } from './support/receiver.js';
import { Pem, TestCertificates } from './support/test-certificates.js';
import { NodeTlsReceiver, TlsReceiver } from './support/tls-receiver.js';
import { harness, TestApp, until } from './support/harness.js';

// Mutual TLS on real sockets: a receiver on 127.0.0.1 that requires a client certificate issued
// by the partners' CA and serves one issued by another private CA; every certificate made here
// by openssl, never checked in.
let certs: TestCertificates;
const pem: Record<string, Pem> = {};
let rx: TlsReceiver;

beforeAll(async () => {
  certs = new TestCertificates();
  pem.partnerCa = certs.ca('partner-ca');
  pem.receiverCa = certs.ca('receiver-ca');
  pem.otherCa = certs.ca('other-ca');
  certs.issue('receiver', 'receiver-ca', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth');
  for (const name of ['acme-client', 'acme-renewed', 'beta-client'])
    pem[name] = certs.issue(name, 'partner-ca', 'extendedKeyUsage=clientAuth');
  pem.rogue = certs.issue('rogue-client', 'other-ca', 'extendedKeyUsage=clientAuth');
  rx = await TlsReceiver.start(certs.file('receiver.crt'), certs.file('receiver.key'), certs.file('partner-ca.crt'));
});
afterAll(async () => {
  await rx?.close();
  certs?.close();
});

describe('callbacks over mutual TLS', () => {
  let t: TestApp;
  let n = 0;
  const e2e = harness({}, { partner: null });
  beforeAll(() => ({ t } = e2e));

  async function partner(certificate?: { pem: Pem; serverCa?: string }) {
    const p = (await t.admin('post', '/admin/v1/partners', { name: 'Mutual Bank' }).expect(201)).body as {
      id: string;
      apiKey: string;
    };
    if (certificate) await setCertificate(p.id, certificate.pem, certificate.serverCa ?? pem.receiverCa.certificate);
    return p;
  }
  const setCertificate = (id: string, leaf: Pem, serverCa?: string) =>
    t
      .admin('put', `/admin/v1/partners/${id}/client-certificate`, {
        certificate: `${leaf.certificate}${pem.partnerCa.certificate}`,
        privateKey: leaf.key,
        ...(serverCa ? { serverCa } : {}),
      })
      .expect(200);

  /** Records one callback of the partner to `url` and waits for its first attempt; returns its id and that attempt. */
  async function attempt(apiKey: string, url: (path: string) => string) {
    const path = `/cb/${++n}`;
    const c = (await t.as(apiKey, 'post', '/v1/companies', { name: 'Acme', status_callback: url(path) }).expect(201))
      .body.id;
    await t.admin('patch', `/admin/v1/companies/${c}/credit`, { creditStatus: 'closed' }).expect(200);
    const [cb] = (await t.admin('get', `/admin/v1/callbacks?companyId=${c}`).expect(200)).body.items;
    const detail = await until(
      async () => {
        const d = (await t.admin('get', `/admin/v1/callbacks/${cb.id}`).expect(200)).body;
        return d.attempts.length > 0 ? d : null;
      },
      { what: `the first attempt of ${path}` },
    );
    return { path, callback: detail, first: detail.attempts[0] as { statusCode: number | null; error: string | null } };
  }
  const toReceiver = (path: string) => rx.url(path);

  it('delivers with the right certificate, verifying the receiver against serverCa', async () => {
    const p = await partner({ pem: pem['acme-client'] });
    const { path, callback, first } = await attempt(p.apiKey, toReceiver);
    expect(first).toMatchObject({ statusCode: 204, error: null });
    // The attempt's record and the callback's status may be read either side of its settlement.
    await until(
      async () => (await t.admin('get', `/admin/v1/callbacks/${callback.id}`).expect(200)).body.status === 'delivered',
      { what: 'delivered' },
    );
    expect(rx.on(path)).toEqual([
      expect.objectContaining({
        client: 'acme-client',
        headers: expect.objectContaining({ 'webhook-id': callback.id }),
      }),
    ]);
  });

  it('never mixes partners’ certificates on reused connections, nor a replaced certificate with its successor', async () => {
    const a = await partner({ pem: pem['acme-client'] });
    const b = await partner({ pem: pem['beta-client'] });
    const sent: [string, string][] = [];
    for (let i = 0; i < 3; i++) {
      sent.push([(await attempt(a.apiKey, toReceiver)).path, 'acme-client']);
      sent.push([(await attempt(b.apiKey, toReceiver)).path, 'beta-client']);
    }
    await setCertificate(a.id, pem['acme-renewed'], pem.receiverCa.certificate);
    sent.push([(await attempt(a.apiKey, toReceiver)).path, 'acme-renewed']);
    sent.push([(await attempt(b.apiKey, toReceiver)).path, 'beta-client']);
    expect(sent.map(([path]) => [path, rx.on(path).map((h) => h.client)])).toEqual(
      sent.map(([path, client]) => [path, [client]]),
    );
  });

  it('without a certificate (and so without serverCa) refuses the receiver: its private CA is none of the public roots', async () => {
    const p = await partner();
    const { path, callback, first } = await attempt(p.apiKey, toReceiver);
    expect(first.statusCode).toBeNull();
    expect(first.error).toMatch(
      /^TLS: the receiver's certificate was not accepted: .* \(UNABLE_TO_VERIFY_LEAF_SIGNATURE\)$/,
    );
    const settled = await until(
      async () => {
        const d = (await t.admin('get', `/admin/v1/callbacks/${callback.id}`).expect(200)).body;
        return d.lastError ? d : null;
      },
      { what: 'its lastError' },
    );
    expect(settled).toMatchObject({ status: 'pending', lastError: first.error });
    expect(rx.on(path)).toEqual([]);
  });

  it('is refused with a certificate of another CA: "TLS: …" naming the unknown CA', async () => {
    const p = await partner();
    await t
      .admin('put', `/admin/v1/partners/${p.id}/client-certificate`, {
        certificate: pem.rogue.certificate,
        privateKey: pem.rogue.key,
        serverCa: pem.receiverCa.certificate,
      })
      .expect(200);
    const { path, first } = await attempt(p.apiKey, toReceiver);
    expect(first.error).toMatch(
      /^TLS: the receiver refused the client certificate: it does not trust the certificate's issuer \(unknown CA\) \(ERR_SSL_TLSV1_ALERT_UNKNOWN_CA\)$/,
    );
    expect(rx.on(path)).toEqual([]);
  });

  it('refuses the receiver when serverCa does not hold its CA, and trusts only the public roots without serverCa', async () => {
    const wrong = await partner({ pem: pem['acme-client'], serverCa: pem.otherCa.certificate });
    const refused = await attempt(wrong.apiKey, toReceiver);
    expect(refused.first.error).toMatch(
      /^TLS: the receiver's certificate was not accepted: .* \(UNABLE_TO_VERIFY_LEAF_SIGNATURE\)$/,
    );
    const none = await partner();
    await setCertificate(none.id, pem['acme-client']);
    const publicRoots = await attempt(none.apiKey, toReceiver);
    expect(publicRoots.first.error).toMatch(
      /^TLS: the receiver's certificate was not accepted: .* \(UNABLE_TO_VERIFY_LEAF_SIGNATURE\)$/,
    );
    expect([...rx.on(refused.path), ...rx.on(publicRoots.path)]).toEqual([]);
  });

  it('records a TLS 1.3 receiver\'s refusal by closing the connection as "TLS: …", retried like any TLS failure', async () => {
    const node = await NodeTlsReceiver.start(certs, pem.partnerCa.certificate, 'TLSv1.3');
    try {
      const p = await partner();
      await t
        .admin('put', `/admin/v1/partners/${p.id}/client-certificate`, {
          certificate: pem.rogue.certificate,
          privateKey: pem.rogue.key,
          serverCa: pem.receiverCa.certificate,
        })
        .expect(200);
      const { callback, first } = await attempt(p.apiKey, node.url);
      expect(first).toMatchObject({ statusCode: null, error: expect.stringMatching(LATE_REFUSAL) });
      const settled = await until(
        async () => {
          const d = (await t.admin('get', `/admin/v1/callbacks/${callback.id}`).expect(200)).body;
          return d.lastError ? d : null;
        },
        { what: 'its lastError' },
      );
      expect(settled).toMatchObject({ status: 'pending', lastError: first.error });
      expect(node.hits).toEqual([]);
    } finally {
      await node.close();
    }
  });

  it('sends to an http URL of the same partner as before, without TLS', async () => {
    const plain = await Receiver.start();
    try {
      const p = await partner({ pem: pem['acme-client'] });
      const { path, first } = await attempt(p.apiKey, (x) => plain.url(x));
      expect(first).toMatchObject({ statusCode: 204, error: null });
      expect(plain.on(path)).toHaveLength(1);
    } finally {
      await plain.close();
    }
  });
});

// A worker that trusts the receiver's CA without serverCa (NODE_EXTRA_CA_CERTS, in a process of
// its own: the jest process's roots stay the public ones), so the receiver's own refusal of a
// missing client certificate is what the attempt meets.
describe('a receiver requiring a client certificate, reached without one', () => {
  let t: TestApp;
  let worker: Awaited<ReturnType<typeof startService>> | undefined;
  beforeAll(() => buildService(), 120_000);
  // The worker stops before the app closes (hooks run in the order declared).
  afterAll(async () => {
    if (worker) await stop(worker, 'SIGTERM');
  });
  const e2e = harness({ ROLE: 'api' }, { partner: null });
  beforeAll(async () => {
    ({ t } = e2e);
    worker = await startService({ ...workerEnv(t), NODE_EXTRA_CA_CERTS: certs.file('receiver-ca.crt') });
  }, 120_000);

  async function firstError(apiKey: string, path: string, url = rx.url(path)): Promise<string | null> {
    const c = (await t.as(apiKey, 'post', '/v1/companies', { name: 'Acme', status_callback: url }).expect(201)).body.id;
    await t.admin('patch', `/admin/v1/companies/${c}/credit`, { creditStatus: 'closed' }).expect(200);
    const [cb] = (await t.admin('get', `/admin/v1/callbacks?companyId=${c}`).expect(200)).body.items;
    const detail = await until(
      async () => {
        const d = (await t.admin('get', `/admin/v1/callbacks/${cb.id}`).expect(200)).body;
        return d.attempts.length > 0 ? d : null;
      },
      { what: `the first attempt to ${path}` },
    );
    return detail.attempts[0].error;
  }

  it('is refused and recorded "TLS: …" naming the missing certificate; so once the certificate is removed', async () => {
    const p = (await t.admin('post', '/admin/v1/partners', { name: 'Uncertified Bank' }).expect(201)).body;
    expect(await firstError(p.apiKey, '/none/1')).toBe(
      'TLS: the receiver requires a client certificate and none was presented (ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED)',
    );
    const leaf = pem['acme-client'];
    await t
      .admin('put', `/admin/v1/partners/${p.id}/client-certificate`, {
        certificate: leaf.certificate,
        privateKey: leaf.key,
      })
      .expect(200);
    expect(await firstError(p.apiKey, '/none/2')).toBeNull();
    expect(rx.on('/none/2').map((h) => h.client)).toEqual(['acme-client']);
    await t.admin('delete', `/admin/v1/partners/${p.id}/client-certificate`).expect(204);
    expect(await firstError(p.apiKey, '/none/3')).toMatch(/^TLS: the receiver requires a client certificate/);
    expect([...rx.on('/none/1'), ...rx.on('/none/3')]).toEqual([]);
  });

  it('records a receiver closing the connection after a handshake without a certificate as the network error it is', async () => {
    const hangUp = https.createServer(
      { key: readFileSync(certs.file('receiver.key')), cert: readFileSync(certs.file('receiver.crt')) },
      (req) => req.socket.destroy(),
    );
    await new Promise<void>((res) => hangUp.listen(0, '127.0.0.1', res));
    try {
      const p = (await t.admin('post', '/admin/v1/partners', { name: 'Uncertified Bank' }).expect(201)).body;
      const url = `https://127.0.0.1:${(hangUp.address() as AddressInfo).port}/none/hang-up`;
      expect(await firstError(p.apiKey, '/none/hang-up', url)).toBe('ECONNRESET: socket hang up');
    } finally {
      await new Promise((res) => hangUp.close(res));
    }
  });
});

/** The cause a closing after the handshake is recorded with, the underlying error kept. */
const LATE_REFUSAL =
  /^TLS: the receiver closed the connection after the TLS handshake, before any answer: it may have refused the client certificate \((ECONNRESET|EPIPE): .+\)$/;

describe("a receiver that refuses the client certificate by closing the connection (Node's https server)", () => {
  let sender: CallbackSender;
  beforeAll(() => {
    sender = new CallbackSender(
      loadConfig({ ADMIN_TOKEN: 'x'.repeat(20), CALLBACK_ALLOW_PRIVATE_TARGETS: 'true', CALLBACK_ALLOW_HTTP: 'true' }),
    );
  });
  afterAll(() => sender?.close());

  let n = 0;
  const tls = (leaf: Pem) => ({
    id: `upload-${++n}`,
    partnerId: `partner-${n}`,
    certificate: leaf.certificate,
    key: leaf.key,
    serverCa: pem.receiverCa.certificate,
  });
  const send = (url: string, leaf?: Pem) =>
    sender.send({
      url,
      headers: { 'content-type': 'application/json' },
      body: '{}',
      clientTls: leaf ? tls(leaf) : null,
    });

  it.each<[SecureVersion, RegExp]>([
    // The client's handshake is over before the receiver checks its certificate: closed after it, before any answer.
    ['TLSv1.3', LATE_REFUSAL],
    // The receiver checks it within the handshake: closed during it.
    [
      'TLSv1.2',
      /^TLS: the receiver closed the connection during the TLS handshake: it may have refused the client certificate \((ECONNRESET|EPIPE): .+\)$/,
    ],
  ])(
    'in %s: "TLS: …" saying it may have refused the certificate, a retryable TLS failure; the right certificate delivers',
    async (version, cause) => {
      const node = await NodeTlsReceiver.start(certs, pem.partnerCa.certificate, version);
      try {
        for (let i = 0; i < 3; i++) {
          expect(await send(node.url(`/rogue/${i}`), pem.rogue)).toMatchObject({
            outcome: { kind: 'tls' },
            statusCode: null,
            error: expect.stringMatching(cause),
          });
        }
        expect(await send(node.url('/good'), pem['acme-client'])).toMatchObject({
          outcome: { kind: 'http', statusCode: 204 },
          error: null,
        });
        // Its connection reused: still delivered, never taken for a refusal.
        expect(await send(node.url('/good/again'), pem['acme-client'])).toMatchObject({
          outcome: { kind: 'http', statusCode: 204 },
          error: null,
        });
        expect(node.hits).toEqual(['/good', '/good/again']);
      } finally {
        await node.close();
      }
    },
  );

  it('keeps the network error on an http URL, the client certificate configured but not presented', async () => {
    const hangUp = http.createServer((req) => req.socket.destroy());
    await new Promise<void>((res) => hangUp.listen(0, '127.0.0.1', res));
    try {
      const plain = `http://127.0.0.1:${(hangUp.address() as AddressInfo).port}/plain`;
      expect(await send(plain, pem['acme-client'])).toMatchObject({
        outcome: { kind: 'network' },
        error: 'ECONNRESET: socket hang up',
      });
    } finally {
      await new Promise((res) => hangUp.close(res));
    }
  });
});

/** A forward proxy on 127.0.0.1 that opens CONNECT tunnels; `connects` lists the targets asked for. */
async function connectProxy() {
  const connects: string[] = [];
  const tunnels: net.Socket[] = [];
  const proxy = http.createServer();
  proxy.on('connect', (req, client: net.Socket, head) => {
    connects.push(req.url!);
    tunnels.push(client);
    const [host, port] = req.url!.split(':');
    const upstream = net.connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client).pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((res) => proxy.listen(0, '127.0.0.1', res));
  return {
    connects,
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    close: () => {
      tunnels.forEach((s) => s.destroy());
      return new Promise((res) => proxy.close(res));
    },
  };
}

describe('mutual TLS through CALLBACK_PROXY_URL', () => {
  it('presents the certificate inside the CONNECT tunnel, and records a refusal there as "TLS: …"', async () => {
    const proxy = await connectProxy();
    const sender = new CallbackSender(
      loadConfig({
        ADMIN_TOKEN: 'x'.repeat(20),
        CALLBACK_ALLOW_PRIVATE_TARGETS: 'true',
        CALLBACK_PROXY_URL: proxy.url,
      }),
    );
    try {
      const tls = (id: string, leaf: Pem) => ({
        id,
        partnerId: id,
        certificate: leaf.certificate,
        key: leaf.key,
        serverCa: pem.receiverCa.certificate,
      });
      const request = (path: string) => ({
        url: rx.url(path),
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      const ok = await sender.send({ ...request('/proxy/ok'), clientTls: tls('p1', pem['acme-client']) });
      expect(ok).toMatchObject({ statusCode: 204, error: null });
      expect(rx.on('/proxy/ok').map((h) => h.client)).toEqual(['acme-client']);
      const refused = await sender.send({ ...request('/proxy/rogue'), clientTls: tls('p2', pem.rogue) });
      expect(refused).toMatchObject({
        outcome: { kind: 'tls' },
        statusCode: null,
        error: expect.stringMatching(/^TLS: .*unknown CA/),
      });
      const untrusted = await sender.send({
        ...request('/proxy/untrusted'),
        clientTls: { ...tls('p3', pem['acme-client']), serverCa: pem.otherCa.certificate },
      });
      expect(untrusted.error).toMatch(/^TLS: the receiver's certificate was not accepted: /);
      expect(proxy.connects).toEqual(expect.arrayContaining([`127.0.0.1:${rx.port}`]));
      expect(rx.on('/proxy/rogue')).toEqual([]);
    } finally {
      sender.close();
      await proxy.close();
    }
  });
});
