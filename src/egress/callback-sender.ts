// The one place that opens connections to partners: egress address, proxy, connect-time
// destination check, timeout, no redirects, no retries of its own, a capped response read.
import { Inject, Injectable } from '@nestjs/common';
import got, { Got, RequestError } from 'got';
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import tls from 'node:tls';
import { APP_CONFIG, AppConfig } from '../config/app-config.js';
import { AttemptOutcome, isSuccessStatus } from './attempt-outcome.js';
import { assertDestinationAllowed, checkConnectedAddress, DestinationRefused, GuardOptions, guardedLookup } from './destination-guard.js';

export interface SendResult {
  outcome: AttemptOutcome;
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
  sourceAddress: string | null;
  durationMs: number;
}

export interface SendRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** Lets tests resolve host names to addresses of their choosing (never real DNS). */
export const DNS_LOOKUP = Symbol('DNS_LOOKUP');

/** What the attempt log keeps of a response body. */
export const RESPONSE_BODY_LIMIT = 1024;

type Lookup = ReturnType<typeof guardedLookup>;

interface Egress {
  localAddress: string | undefined;
  agents: { http: http.Agent; https: https.Agent };
  /** got with every option but the request's own set once: merging them per request cost ~15 µs of CPU. */
  client: Got;
}

type TunnelOptions = http.ClientRequestArgs & tls.ConnectionOptions;
type Connected = (err: Error | null, socket?: Socket) => void;
/** What runs in the tunnel the proxy opened: plain HTTP as it is, HTTPS inside TLS to the partner. */
type OverTunnel = (socket: Socket, options: TunnelOptions, host: string, callback: Connected) => void;

const plainHttp: OverTunnel = (socket, _options, _host, callback) => callback(null, socket);

const overTls: OverTunnel = (socket, options, host, callback) => {
  const secureSocket = tls.connect({ ...options, socket, servername: options.servername ?? host });
  secureSocket.once('secureConnect', () => callback(null, secureSocket));
  secureSocket.once('error', callback);
};

/**
 * Opens every connection through CONNECT to the proxy, asking for the address our guarded
 * lookup vetted (not the host name), so the proxy cannot be steered to a private address by
 * DNS either. The proxy is trusted to connect where it is asked. TLS to the partner runs inside
 * the tunnel with the partner's host name for SNI and certificate checks.
 */
function tunnelConnection(proxy: URL, lookup: Lookup, localAddress: string | undefined, over: OverTunnel) {
  return (options: TunnelOptions, callback: Connected) => {
    const host = String(options.host ?? options.hostname).replace(/^\[|\]$/g, '');
    const port = Number(options.port);
    lookup(host, {}, (err, address) => {
      if (err) return callback(err);
      const target = String(address).includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
      const req = http.request({
        host: proxy.hostname,
        port: Number(proxy.port || 80),
        method: 'CONNECT',
        path: target,
        headers: { host: target },
        localAddress,
        agent: false,
      });
      req.once('connect', (res, socket) => {
        if (res.statusCode !== 200) {
          socket.destroy();
          return callback(new Error(`proxy refused CONNECT ${target}: ${res.statusCode}`));
        }
        over(socket, options, host, callback);
      });
      req.once('error', callback);
      req.end();
    });
  };
}

@Injectable()
export class CallbackSender {
  private readonly guard: GuardOptions;
  private readonly egress: Egress[];
  private next = 0;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(DNS_LOOKUP) lookup: typeof dns.lookup = dns.lookup,
  ) {
    this.guard = { allowHttp: config.callbackAllowHttp, allowPrivate: config.callbackAllowPrivateTargets };
    const vetted = guardedLookup(this.guard, lookup as never);
    const addresses = config.callbackLocalAddresses.length > 0 ? config.callbackLocalAddresses : [undefined];
    const proxy = config.callbackProxyUrl ? new URL(config.callbackProxyUrl) : null;
    this.egress = addresses.map((localAddress) => {
      const common = { keepAlive: true, maxSockets: 256, scheduling: 'lifo' as const, lookup: vetted as never, localAddress };
      const agents = { http: new http.Agent(common), https: new https.Agent(common) };
      if (proxy) {
        Object.assign(agents.http, { createConnection: tunnelConnection(proxy, vetted, localAddress, plainHttp) });
        Object.assign(agents.https, { createConnection: tunnelConnection(proxy, vetted, localAddress, overTls) });
      }
      const client = got.extend({
        agent: agents,
        followRedirect: false,
        throwHttpErrors: false,
        retry: { limit: 0 },
        // A dead host costs the connect timeout, not the whole attempt's.
        timeout: { request: config.callbackTimeoutMs, connect: config.callbackConnectTimeoutMs, secureConnect: config.callbackConnectTimeoutMs },
        decompress: false,
      });
      return { localAddress, agents, client };
    });
  }

  /** One attempt. Never throws: every failure is an outcome for the retry policy. */
  async send(req: SendRequest): Promise<SendResult> {
    const egress = this.egress[this.next++ % this.egress.length];
    const started = performance.now();
    const done = (r: Omit<SendResult, 'durationMs'>): SendResult => ({ ...r, durationMs: Math.round(performance.now() - started) });
    try {
      // Node skips `lookup` for IP literals, so those are vetted here, before any socket exists.
      assertDestinationAllowed(new URL(req.url), this.guard);
    } catch (e) {
      if (e instanceof DestinationRefused) {
        return done({ outcome: { kind: 'refused' }, statusCode: null, error: e.message, responseBody: null, sourceAddress: null });
      }
      return done({ outcome: { kind: 'refused' }, statusCode: null, error: `invalid URL: ${req.url}`, responseBody: null, sourceAddress: null });
    }
    let sourceAddress: string | null = egress.localAddress ?? null;
    try {
      const res = await new Promise<{ statusCode: number; retryAfter: string | null; body: string }>((resolve, reject) => {
        // Stream mode lets us stop reading after 1 KiB: a receiver answering with megabytes
        // costs us one small buffer, not memory proportional to its answer.
        const stream = egress.client.stream.post(req.url, { body: req.body, headers: req.headers });
        const chunks: Buffer[] = [];
        let size = 0;
        let status = 0;
        let retryAfter: string | null = null;
        const finish = () => resolve({ statusCode: status, retryAfter, body: safeText(Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT)) });
        stream.once('response', (res: http.IncomingMessage) => {
          status = res.statusCode ?? 0;
          const h = res.headers['retry-after'];
          retryAfter = Array.isArray(h) ? h[0] : (h ?? null);
          const socket = res.socket;
          sourceAddress = socket?.localAddress ?? sourceAddress;
          const problem = checkConnectedAddress(socket?.remoteAddress, this.guard);
          if (problem && !this.config.callbackProxyUrl) {
            stream.destroy(new DestinationRefused(problem));
          }
        });
        stream.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          if (size >= RESPONSE_BODY_LIMIT) {
            stream.destroy();
            finish();
          }
        });
        stream.once('end', finish);
        stream.once('error', (err: Error) => {
          // Destroying after 1 KiB may surface as an abort error: the answer was already taken.
          if (size >= RESPONSE_BODY_LIMIT && status) return finish();
          reject(err);
        });
      });
      return done({
        outcome: { kind: 'http', statusCode: res.statusCode, retryAfter: res.retryAfter },
        statusCode: res.statusCode,
        error: isSuccessStatus(res.statusCode) ? null : `HTTP ${res.statusCode}`,
        responseBody: res.body,
        sourceAddress,
      });
    } catch (e) {
      return done({ ...classify(e, this.config), statusCode: null, responseBody: null, sourceAddress });
    }
  }

  close(): void {
    for (const { agents } of this.egress) {
      agents.http.destroy();
      agents.https.destroy();
    }
  }
}

/**
 * What the attempt log keeps of an answer's bytes: UTF-8 decoding turns invalid sequences (and a
 * character cut at the 1 KiB mark) into U+FFFD, and NUL, which PostgreSQL's text refuses,
 * becomes U+FFFD too. Whatever a receiver sends, its record can be written.
 */
export function safeText(bytes: Buffer): string {
  return bytes.toString('utf8').replace(/\u0000/g, '\ufffd');
}

/** Maps an error to an outcome by its type and code, never by its message text. */
function classify(e: unknown, limits: { callbackTimeoutMs: number; callbackConnectTimeoutMs: number }): { outcome: AttemptOutcome; error: string } {
  const inner = e instanceof RequestError && e.cause ? e.cause : e;
  if (inner instanceof DestinationRefused || e instanceof DestinationRefused || (inner as NodeJS.ErrnoException)?.code === 'EDESTINATIONREFUSED') {
    return { outcome: { kind: 'refused' }, error: (inner as Error).message };
  }
  const err = e as RequestError;
  if (err?.name === 'TimeoutError' || err?.code === 'ETIMEDOUT') {
    const event = (err as { event?: string }).event;
    if (event === 'connect' || event === 'secureConnect') {
      return { outcome: { kind: 'timeout' }, error: `connect timeout: no connection within ${limits.callbackConnectTimeoutMs} ms` };
    }
    return { outcome: { kind: 'timeout' }, error: `timeout: no answer within ${limits.callbackTimeoutMs} ms` };
  }
  const code = (inner as NodeJS.ErrnoException)?.code ?? err?.code ?? 'ERROR';
  return { outcome: { kind: 'network' }, error: `${code}: ${(inner as Error)?.message ?? String(e)}`.replace(/\u0000/g, '\ufffd') };
}
