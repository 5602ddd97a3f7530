// The got clients and keep-alive agents the sender sends with: one set per egress address, and
// one https agent per partner certificate upload and egress address beside it (the most recently
// used only); their idle connections are bounded together (IdleSockets).
import got, { Got, RequestFunction } from 'got';
import http from 'node:http';
import https from 'node:https';
import type { ClientTls } from './client-tls.js';
import type { guardedLookup } from './destination-guard.js';
import type { IdleSockets } from './idle-sockets.js';
import { Lru } from '../platform/index.js';
import { overTls, plainHttp, tunnelConnection } from './proxy-tunnel.js';

export interface EgressOptions {
  lookup: ReturnType<typeof guardedLookup>;
  proxy: URL | null;
  timeoutMs: number;
  connectTimeoutMs: number;
  /** Every agent's idle connections, bounded together. */
  idle: IdleSockets;
}

export interface Egress {
  localAddress: string | undefined;
  agents: { http: http.Agent; https: https.Agent };
  /** got with every option but the request's own set once: merging them per request cost CPU on every attempt. */
  client: Got;
}

function agentOptions(localAddress: string | undefined, o: EgressOptions) {
  return { keepAlive: true, maxSockets: 256, scheduling: 'lifo' as const, lookup: o.lookup as never, localAddress };
}

function httpsAgent(localAddress: string | undefined, o: EgressOptions): https.Agent {
  const agent = o.idle.watch(new https.Agent(agentOptions(localAddress, o)));
  if (o.proxy) Object.assign(agent, { createConnection: tunnelConnection(o.proxy, o.lookup, localAddress, overTls) });
  return agent;
}

/**
 * Node's http(s).request given only the options that are set. got passes every TLS and HTTP option,
 * most of them undefined, and Node's agent copies them into an object each connection keeps while
 * it lives (about 60 keys, 3 KB of heap): a request waiting on a silent receiver holds 2 KB less.
 */
export const compactRequest: RequestFunction = (url, options, callback) => {
  const set: Record<string, unknown> = {};
  for (const key in options) {
    const value = (options as Record<string, unknown>)[key];
    if (value !== undefined) set[key] = value;
  }
  return (url.protocol === 'https:' ? https : http).request(url, set, callback);
};

export function newEgress(localAddress: string | undefined, o: EgressOptions): Egress {
  const agents = {
    http: o.idle.watch(new http.Agent(agentOptions(localAddress, o))),
    https: httpsAgent(localAddress, o),
  };
  if (o.proxy)
    Object.assign(agents.http, { createConnection: tunnelConnection(o.proxy, o.lookup, localAddress, plainHttp) });
  const client = got.extend({
    agent: agents,
    followRedirect: false,
    throwHttpErrors: false,
    retry: { limit: 0 },
    // A dead host costs the connect timeout, not the whole attempt's.
    timeout: { request: o.timeoutMs, connect: o.connectTimeoutMs, secureConnect: o.connectTimeoutMs },
    decompress: false,
    request: compactRequest,
  });
  return { localAddress, agents, client };
}

interface Certified {
  id: string;
  partnerId: string;
  agent: https.Agent;
  client: Got;
}

/**
 * The clients that present a partner's client certificate: per upload and egress address, each
 * with an https agent of its own, so a pooled connection (or a resumed TLS session) made with one
 * partner's certificate is never used for another's, nor for a certificate that replaced it.
 * (Node's agent also names its pools by the TLS options, certificate and key among them; the
 * agents of their own also let a replaced upload's idle connections be closed.)
 */
export class CertifiedClients {
  private readonly pools: Lru<string, Certified>;

  /** `limit`: uploads with pools kept at once; beyond, the least recently used is closed (made again when needed). */
  constructor(
    private readonly options: EgressOptions,
    limit: number,
  ) {
    this.pools = new Lru(limit, closePool);
  }

  client(tls: ClientTls, egress: Egress): Got {
    const key = `${tls.id}|${egress.localAddress ?? ''}`;
    const known = this.pools.get(key);
    if (known) return known.client;
    this.retire((c) => c.partnerId === tls.partnerId && c.id !== tls.id);
    const agent = httpsAgent(egress.localAddress, this.options);
    const client = egress.client.extend({
      agent: { http: egress.agents.http, https: agent },
      https: {
        certificate: tls.certificate,
        key: tls.key,
        ...(tls.serverCa === null ? {} : { certificateAuthority: tls.serverCa }),
      },
    });
    this.pools.set(key, { id: tls.id, partnerId: tls.partnerId, agent, client });
    return client;
  }

  close(): void {
    this.retire(() => true);
  }

  /**
   * Drops the pools `which` picks (a replaced upload's): their idle connections are closed now,
   * those in use as soon as their request is done, and nothing uses a dropped agent again.
   */
  private retire(which: (c: Certified) => boolean): void {
    for (const [key, c] of [...this.pools]) {
      if (!which(c)) continue;
      this.pools.delete(key);
      closePool(c);
    }
  }
}

/** A dropped pool: its idle connections closed now, those in use as soon as their request is done. */
function closePool(c: Certified): void {
  c.agent.on('free', (socket: { destroy(): void }) => socket.destroy());
  for (const sockets of Object.values(c.agent.freeSockets)) for (const s of sockets ?? []) s.destroy();
}
