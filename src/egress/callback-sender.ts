// The one place that opens connections to partners: egress address, proxy, connect-time
// destination check, the partner's client certificate on https, timeout, no redirects, no retries
// of its own, a capped response read.
import { Inject, Injectable } from '@nestjs/common';
import { RequestError } from 'got';
import dns from 'node:dns';
import http from 'node:http';
import { APP_CONFIG, AppConfig } from '../platform/index.js';
import { AttemptOutcome, isSuccessStatus } from './attempt-outcome.js';
import type { ClientTls } from './client-tls.js';
import {
  assertDestinationAllowed,
  checkConnectedAddress,
  DestinationRefused,
  GuardOptions,
  guardedLookup,
} from './destination-guard.js';
import { CertifiedClients, Egress, newEgress } from './egress-clients.js';
import { ConnectionWatch } from './connection-watch.js';
import { IdleSockets } from './idle-sockets.js';
import { AnswerHead, answerHead } from './answer-headers.js';
import { closedOnCertificate, tlsFailure } from './tls-failure.js';

export interface SendResult {
  outcome: AttemptOutcome;
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
  sourceAddress: string | null;
  /** The answer's status line and headers, bounded (null: no answer came). */
  answer: AnswerHead | null;
  durationMs: number;
}

export interface SendRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** The partner's client certificate: presented on https connections only, never on http. */
  clientTls?: ClientTls | null;
}

/** Lets tests resolve host names to addresses of their choosing (never real DNS). */
export const DNS_LOOKUP = Symbol('DNS_LOOKUP');

/** What the attempt log keeps of a response body. */
export const RESPONSE_BODY_LIMIT = 1024;

@Injectable()
export class CallbackSender {
  private readonly guard: GuardOptions;
  private readonly egress: Egress[];
  private readonly certified: CertifiedClients;
  private next = 0;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(DNS_LOOKUP) lookup: typeof dns.lookup = dns.lookup,
  ) {
    this.guard = { allowHttp: config.callbackAllowHttp, allowPrivate: config.callbackAllowPrivateTargets };
    const options = {
      lookup: guardedLookup(this.guard, lookup),
      proxy: config.callbackProxyUrl ? new URL(config.callbackProxyUrl) : null,
      timeoutMs: config.callbackTimeoutMs,
      connectTimeoutMs: config.callbackConnectTimeoutMs,
      // Idle connections kept: as many as this worker has deliveries in flight at most.
      idle: new IdleSockets(config.callbackConcurrency),
    };
    const addresses = config.callbackLocalAddresses.length > 0 ? config.callbackLocalAddresses : [undefined];
    this.egress = addresses.map((localAddress) => newEgress(localAddress, options));
    this.certified = new CertifiedClients(options, config.callbackConcurrency);
  }

  /** One attempt. Never throws: every failure is an outcome for the retry policy. */
  async send(req: SendRequest): Promise<SendResult> {
    const egress = this.egress[this.next++ % this.egress.length];
    const started = performance.now();
    const done = (r: Omit<SendResult, 'durationMs'>): SendResult => ({
      ...r,
      durationMs: Math.round(performance.now() - started),
    });
    try {
      // Node skips `lookup` for IP literals, so those are vetted here, before any socket exists.
      assertDestinationAllowed(new URL(req.url), this.guard);
    } catch (e) {
      if (e instanceof DestinationRefused) {
        return done({
          outcome: { kind: 'refused' },
          statusCode: null,
          error: e.message,
          responseBody: null,
          sourceAddress: null,
          answer: null,
        });
      }
      return done({
        outcome: { kind: 'refused' },
        statusCode: null,
        error: `invalid URL: ${req.url}`,
        responseBody: null,
        sourceAddress: null,
        answer: null,
      });
    }
    let sourceAddress: string | null = egress.localAddress ?? null;
    // Only a connection that presents a client certificate can be refused for it.
    let watch: ConnectionWatch | null = null;
    try {
      const res = await new Promise<{ statusCode: number; retryAfter: string | null; body: string; head: AnswerHead }>(
        (resolve, reject) => {
          // Stream mode lets us stop reading after 1 KiB: a receiver answering with megabytes
          // costs us one small buffer, not memory proportional to its answer.
          const clientTls = req.url.startsWith('https:') ? req.clientTls : null;
          const client = clientTls ? this.certified.client(clientTls, egress) : egress.client;
          const stream = client.stream.post(req.url, { body: req.body, headers: req.headers });
          if (clientTls) watch = new ConnectionWatch(stream);
          const chunks: Buffer[] = [];
          let size = 0;
          let status = 0;
          let retryAfter: string | null = null;
          let head: AnswerHead = { status: '', headers: [] };
          const finish = () =>
            resolve({
              statusCode: status,
              retryAfter,
              head,
              body: safeText(Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT)),
            });
          stream.once('response', (res: http.IncomingMessage) => {
            status = res.statusCode ?? 0;
            head = answerHead(res);
            const h = res.headers['retry-after'] as string | string[] | undefined;
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
        },
      );
      return done({
        outcome: { kind: 'http', statusCode: res.statusCode, retryAfter: res.retryAfter },
        statusCode: res.statusCode,
        error: isSuccessStatus(res.statusCode) ? null : `HTTP ${res.statusCode}`,
        responseBody: res.body,
        sourceAddress,
        answer: res.head,
      });
    } catch (e) {
      return done({
        ...classify(e, this.config, watch),
        statusCode: null,
        responseBody: null,
        sourceAddress,
        answer: null,
      });
    }
  }

  close(): void {
    this.certified.close();
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
  return bytes.toString('utf8').replaceAll('\0', '\ufffd');
}

/**
 * Maps an error to an outcome by its type and code, never by its message text, and, for a
 * connection that presented a client certificate (`watch`), by how far that connection had got.
 */
function classify(
  e: unknown,
  limits: { callbackTimeoutMs: number; callbackConnectTimeoutMs: number },
  watch: ConnectionWatch | null,
): { outcome: AttemptOutcome; error: string } {
  const inner = e instanceof RequestError && e.cause ? e.cause : e;
  if (
    inner instanceof DestinationRefused ||
    e instanceof DestinationRefused ||
    (inner as NodeJS.ErrnoException)?.code === 'EDESTINATIONREFUSED'
  ) {
    return { outcome: { kind: 'refused' }, error: (inner as Error).message };
  }
  const err = e as RequestError;
  if (err?.name === 'TimeoutError' || err?.code === 'ETIMEDOUT') {
    const event = (err as { event?: string }).event;
    if (event === 'connect' || event === 'secureConnect') {
      return {
        outcome: { kind: 'timeout' },
        error: `connect timeout: no connection within ${limits.callbackConnectTimeoutMs} ms`,
      };
    }
    return { outcome: { kind: 'timeout' }, error: `timeout: no answer within ${limits.callbackTimeoutMs} ms` };
  }
  const code = (inner as NodeJS.ErrnoException)?.code ?? err?.code ?? 'ERROR';
  const message = (inner as Error)?.message ?? String(e);
  const tls = tlsFailure(code, message) ?? closedOnCertificate(code, message, watch?.closedAt() ?? null);
  if (tls) return { outcome: { kind: 'tls' }, error: `TLS: ${tls}`.replaceAll('\0', '\ufffd') };
  return { outcome: { kind: 'network' }, error: `${code}: ${message}`.replaceAll('\0', '\ufffd') };
}
