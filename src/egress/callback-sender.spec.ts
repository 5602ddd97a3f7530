import http from 'node:http';
import net, { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { safeText } from './callback-sender.js';
import { AppConfig, loadConfig } from '../platform/config/app-config.js';
import { CallbackSender } from './callback-sender.js';

interface Hit {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  remoteAddress: string | undefined;
}

/** A real receiver on 127.0.0.1 whose answer each test sets. */
async function receiver(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const hits: Hit[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      hits.push({
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
        remoteAddress: req.socket.remoteAddress,
      });
      handler(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    hits,
    url: (path = '/cb') => `http://127.0.0.1:${port}${path}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A forward proxy on 127.0.0.1 that opens CONNECT tunnels; `connects` lists the targets asked for. */
async function connectProxy() {
  const connects: string[] = [];
  const tunnels: net.Socket[] = [];
  const proxy = http.createServer();
  proxy.on('connect', (req, client: net.Socket, head) => {
    connects.push(req.url!);
    tunnels.push(client);
    const at = req.url!.lastIndexOf(':');
    const host = req.url!.slice(0, at).replace(/^\[|\]$/g, '');
    const upstream = net.connect(Number(req.url!.slice(at + 1)), host, () => {
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
      tunnels.forEach((t) => t.destroy());
      return new Promise((res) => proxy.close(res));
    },
  };
}

/** A self-signed certificate for partner.example (openssl req -x509 … -days 36500): no client trusts it. */
const PARTNER_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg3HYQFQ72GF/6gIsj
vcA4FI0DoRkG03xXo5/duMo6mjKhRANCAAS5ITfP9qnXg3exd1A8MVvrHmhbITBp
qSavzhKZCtexWJAPcbWYdEmHIkm6Y/g4LkGP+dNlKP+UBTfwOh8lxQ55
-----END PRIVATE KEY-----`;
const PARTNER_CERT = `-----BEGIN CERTIFICATE-----
MIIBpjCCAU2gAwIBAgIULOZzhptpLOx1gBwxOrvPnGiijxIwCgYIKoZIzj0EAwIw
GjEYMBYGA1UEAwwPcGFydG5lci5leGFtcGxlMCAXDTI2MTEyNTE0NTQwMVoYDzIx
MjYxMTAxMTQ1NDAxWjAaMRgwFgYDVQQDDA9wYXJ0bmVyLmV4YW1wbGUwWTATBgcq
hkjOPQIBBggqhkjOPQMBBwNCAAS5ITfP9qnXg3exd1A8MVvrHmhbITBpqSavzhKZ
CtexWJAPcbWYdEmHIkm6Y/g4LkGP+dNlKP+UBTfwOh8lxQ55o28wbTAdBgNVHQ4E
FgQUeS2T3ev7yFi1HvKBGxHq7c2j3SAwHwYDVR0jBBgwFoAUeS2T3ev7yFi1HvKB
GxHq7c2j3SAwDwYDVR0TAQH/BAUwAwEB/zAaBgNVHREEEzARgg9wYXJ0bmVyLmV4
YW1wbGUwCgYIKoZIzj0EAwIDRwAwRAIgMhLtn3yg/FYR+81DO/H59XLYJCABdPkc
3ZlfG881SC0CICQ6B8I8i94KC/iBnwo6AokNbk0qIoeWH6zACTg5K5+a
-----END CERTIFICATE-----`;

function config(env: Record<string, string> = {}): AppConfig {
  return loadConfig({
    ADMIN_TOKEN: 'x'.repeat(20),
    CALLBACK_ALLOW_HTTP: 'true',
    CALLBACK_ALLOW_PRIVATE_TARGETS: 'true',
    ...env,
  });
}

const REQ = {
  headers: { 'content-type': 'application/json', 'webhook-id': 'abc' },
  body: '{"message":0,"withdrawalId":null}',
};

describe('CallbackSender', () => {
  const senders: CallbackSender[] = [];
  const make = (env?: Record<string, string>, lookup?: never) => {
    const s = lookup ? new CallbackSender(config(env), lookup) : new CallbackSender(config(env));
    senders.push(s);
    return s;
  };
  afterAll(() => senders.forEach((s) => s.close()));

  it('POSTs the body and headers verbatim and records status, body and source address', async () => {
    const r = await receiver((_, res) => res.writeHead(200).end('thanks'));
    const result = await make().send({ url: r.url(), ...REQ });
    expect(result).toMatchObject({
      outcome: { kind: 'http', statusCode: 200 },
      statusCode: 200,
      error: null,
      responseBody: 'thanks',
      sourceAddress: '127.0.0.1',
    });
    expect(r.hits).toHaveLength(1);
    expect(r.hits[0]).toMatchObject({ method: 'POST', url: '/cb', body: REQ.body });
    expect(r.hits[0].headers).toMatchObject(REQ.headers);
    await r.close();
  });

  it('keeps only the first 1 KiB of a large response body', async () => {
    const r = await receiver((_, res) => res.writeHead(500).end('x'.repeat(5 * 1024)));
    const result = await make().send({ url: r.url(), ...REQ });
    expect(result.statusCode).toBe(500);
    expect(result.error).toBe('HTTP 500');
    expect(result.responseBody).toBe('x'.repeat(1024));
    await r.close();
  });

  it('does not follow a redirect', async () => {
    const target = await receiver((_, res) => res.writeHead(200).end());
    const r = await receiver((_, res) => res.writeHead(302, { location: target.url('/elsewhere') }).end());
    const result = await make().send({ url: r.url(), ...REQ });
    expect(result.outcome).toEqual({ kind: 'http', statusCode: 302, retryAfter: null });
    expect(r.hits).toHaveLength(1);
    expect(target.hits).toHaveLength(0);
    await Promise.all([r.close(), target.close()]);
  });

  it('passes Retry-After on to the retry policy', async () => {
    const r = await receiver((_, res) => res.writeHead(429, { 'retry-after': '7' }).end());
    expect((await make().send({ url: r.url(), ...REQ })).outcome).toEqual({
      kind: 'http',
      statusCode: 429,
      retryAfter: '7',
    });
    await r.close();
  });

  it('gives up on a receiver slower than the timeout', async () => {
    const r = await receiver(() => undefined); // never answers
    const result = await make({ CALLBACK_TIMEOUT_MS: '300' }).send({ url: r.url(), ...REQ });
    expect(result.outcome).toEqual({ kind: 'timeout' });
    expect(result.error).toContain('300 ms');
    expect(result.durationMs).toBeGreaterThanOrEqual(290);
    await r.close();
  });

  it('reports a refused connection as a network error', async () => {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    await new Promise((r) => server.close(r));
    const result = await make().send({ url: `http://127.0.0.1:${port}/cb`, ...REQ });
    expect(result.outcome).toEqual({ kind: 'network' });
    expect(result.error).toMatch(/^ECONNREFUSED/);
  });

  it('binds outgoing sockets to CALLBACK_LOCAL_ADDRESS, one address per attempt in turn', async () => {
    const r = await receiver((_, res) => res.writeHead(204).end());
    const sender = make({ CALLBACK_LOCAL_ADDRESS: '127.0.0.2,127.0.0.3' });
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await sender.send({ url: r.url(), ...REQ }));
    expect(results.map((x) => x.sourceAddress)).toEqual(['127.0.0.2', '127.0.0.3', '127.0.0.2', '127.0.0.3']);
    expect(r.hits.map((h) => h.remoteAddress)).toEqual(['127.0.0.2', '127.0.0.3', '127.0.0.2', '127.0.0.3']);
    await r.close();
  });

  it('sends through CALLBACK_PROXY_URL with a CONNECT tunnel to the vetted address', async () => {
    const r = await receiver((_, res) => res.writeHead(200).end('ok'));
    const proxy = await connectProxy();
    const target = r.url().replace('127.0.0.1', 'localhost');
    const sender = make({ CALLBACK_PROXY_URL: proxy.url });
    const result = await sender.send({ url: target, ...REQ });
    expect(result).toMatchObject({ statusCode: 200, responseBody: 'ok' });
    expect(proxy.connects).toHaveLength(1);
    expect(proxy.connects[0]).toMatch(/^(127\.0\.0\.1|\[::1\]):\d+$/); // the resolved address, not the name
    expect(r.hits[0].body).toBe(REQ.body);
    sender.close();
    await proxy.close();
    await r.close();
  });

  it('runs HTTPS inside the proxy tunnel, with the partner host name for SNI and the certificate check', async () => {
    const names: string[] = [];
    const tlsServer = tls.createServer({
      key: PARTNER_KEY,
      cert: PARTNER_CERT,
      SNICallback: (name, cb) => (names.push(name), cb(null, undefined)),
    });
    await new Promise<void>((res) => tlsServer.listen(0, '127.0.0.1', res));
    const port = (tlsServer.address() as AddressInfo).port;
    const proxy = await connectProxy();
    const lookup = ((_host: string, _opts: unknown, cb: (e: null, a: { address: string; family: number }[]) => void) =>
      cb(null, [{ address: '127.0.0.1', family: 4 }])) as never;
    const sender = make({ CALLBACK_PROXY_URL: proxy.url }, lookup);
    const result = await sender.send({ url: `https://partner.example:${port}/cb`, ...REQ });
    expect(proxy.connects).toEqual([`127.0.0.1:${port}`]);
    expect(names).toEqual(['partner.example']);
    // Its certificate is self-signed: refused, so certificates are checked inside the tunnel.
    expect(result).toMatchObject({ outcome: { kind: 'tls' }, statusCode: null });
    expect(result.error).toMatch(
      /^TLS: the receiver's certificate was not accepted: .*\(DEPTH_ZERO_SELF_SIGNED_CERT\)$/,
    );
    sender.close();
    await proxy.close();
    await new Promise((res) => tlsServer.close(res));
  });

  describe('destination check, before any connection', () => {
    // The TCP handle's connect is where a connection attempt really starts (after lookup).
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { TCP } = (process as any).binding('tcp_wrap');
    const connectSpy = jest.spyOn(TCP.prototype, 'connect');
    const connect6Spy = jest.spyOn(TCP.prototype, 'connect6');
    const targets = () => [...connectSpy.mock.calls, ...connect6Spy.mock.calls].map((c) => String(c[1]));
    beforeEach(() => {
      connectSpy.mockClear();
      connect6Spy.mockClear();
    });
    afterAll(() => {
      connectSpy.mockRestore();
      connect6Spy.mockRestore();
    });

    it('sees a real connection attempt (the spy works)', async () => {
      const r = await receiver((_, res) => res.writeHead(200).end());
      await make().send({ url: r.url(), ...REQ });
      expect(targets()).toContain('127.0.0.1');
      await r.close();
    });

    it.each([
      ['http://10.0.0.1/cb'],
      ['http://169.254.169.254/latest/meta-data'],
      ['http://[::ffff:10.0.0.1]/x'],
      ['http://2130706433/x'],
    ])('refuses %s without opening a socket', async (url) => {
      const result = await make({ CALLBACK_ALLOW_PRIVATE_TARGETS: 'false' }).send({ url, ...REQ });
      expect(result.outcome).toEqual({ kind: 'refused' });
      expect(result.error).toMatch(/^destination refused: /);
      expect(targets()).toEqual([]);
    });

    it(
      'refuses a host name whose lookup returns a private address (DNS rebinding), ' + 'with zero connection attempts',
      async () => {
        const lookups: string[] = [];
        const lookup = ((
          host: string,
          _opts: unknown,
          cb: (e: null, a: { address: string; family: number }[]) => void,
        ) => {
          lookups.push(host);
          cb(null, [{ address: '10.0.0.1', family: 4 }]);
        }) as never;
        const result = await make({ CALLBACK_ALLOW_PRIVATE_TARGETS: 'false' }, lookup).send({
          url: 'http://rebind.test/cb',
          ...REQ,
        });
        expect(lookups).toEqual(['rebind.test']);
        expect(result.outcome).toEqual({ kind: 'refused' });
        expect(result.error).toContain('10.0.0.1');
        expect(targets()).toEqual([]);
      },
    );

    it('refuses localhost (resolving to loopback) unless private targets are allowed', async () => {
      const r = await receiver((_, res) => res.writeHead(200).end());
      const refused = await make({ CALLBACK_ALLOW_PRIVATE_TARGETS: 'false' }).send({
        url: r.url().replace('127.0.0.1', 'localhost'),
        ...REQ,
      });
      expect(refused.outcome).toEqual({ kind: 'refused' });
      expect(r.hits).toHaveLength(0);
      const allowed = await make().send({ url: r.url().replace('127.0.0.1', 'localhost'), ...REQ });
      expect(allowed.statusCode).toBe(200);
      await r.close();
    });
  });
});

describe('safeText', () => {
  it.each([
    [[0x6f, 0x6b], 'ok'],
    [[0x61, 0x00, 0x62], 'a\ufffdb'],
    [[0xff, 0xfe], '\ufffd\ufffd'],
    [[0xe2, 0x82], '\ufffd'], // a character cut at the 1 KiB mark
    [[0xed, 0xa0, 0x80], '\ufffd\ufffd\ufffd'], // an encoded lone surrogate is not UTF-8
  ])('%j → %j', (bytes, text) => expect(safeText(Buffer.from(bytes))).toBe(text));
});
