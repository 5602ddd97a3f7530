import type { ClientRequest } from 'node:http';
import type { Duplex } from 'node:stream';
import { Lru } from '../platform/index.js';

/**
 * The idle keep-alive connections of every agent the sender has (each egress address's, each
 * client certificate's), at most `limit` together: past it the one idle the longest is closed.
 * Node's agent keeps an idle connection per origin until the receiver closes it (its
 * `maxTotalSockets` queues requests behind idle connections instead of closing them), so ten
 * thousand destinations kept ten thousand sockets; a busy destination's connection is freed and
 * taken again all the time, so it stays among the newest.
 */
export class IdleSockets {
  private readonly idle: Lru<Duplex, Duplex>;
  private readonly watched = new WeakSet<Duplex>();

  constructor(limit: number) {
    this.idle = new Lru(limit, (socket) => socket.destroy());
  }

  get size(): number {
    return this.idle.size;
  }

  /** Makes the agent keep its idle connections here: counted when one is kept idle, no more once it is taken again. */
  watch<A extends AgentHooks>(agent: A): A {
    const keep = agent.keepSocketAlive.bind(agent);
    const reuse = agent.reuseSocket.bind(agent);
    return Object.assign(agent, {
      keepSocketAlive: (socket: Duplex) => keep(socket) !== false && this.keep(socket),
      reuseSocket: (socket: Duplex, request: ClientRequest) => {
        this.idle.delete(socket);
        reuse(socket, request);
      },
    });
  }

  private keep(socket: Duplex): true {
    if (!this.watched.has(socket)) {
      this.watched.add(socket);
      socket.once('close', () => this.idle.delete(socket));
    }
    this.idle.set(socket, socket);
    return true;
  }
}

/** What of Node's http(s).Agent the pool hooks into (keepSocketAlive says whether to keep the socket). */
interface AgentHooks {
  keepSocketAlive(socket: Duplex): boolean | void;
  reuseSocket(socket: Duplex, request: ClientRequest): void;
}
