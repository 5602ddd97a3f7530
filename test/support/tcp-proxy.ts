import net, { AddressInfo } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of a real server (PostgreSQL here), which a test can take
 * down (every connection cut, new ones refused and counted), silence, and bring back: an outage of
 * that server for the app only, without stopping the server the other tests share.
 */
export class TcpProxy {
  refused = 0;
  private state: 'up' | 'down' | 'silent' = 'up';
  private readonly sockets = new Set<net.Socket>();
  /** Each open connection's two directions, to hold while silent. */
  private readonly directions = new Set<Direction>();
  /** Connections accepted while silent, linked to the server by `restore()`. */
  private waiting: Direction[] = [];
  private readonly server = net.createServer((client) => this.accept(client));

  private constructor(
    private readonly targetPort: number,
    private readonly targetHost: string,
  ) {}

  static async start(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
    const proxy = new TcpProxy(targetPort, targetHost);
    await new Promise<void>((r) => proxy.server.listen(0, '127.0.0.1', r));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Cuts every connection and refuses new ones until `restore()`. */
  cut(): void {
    this.state = 'down';
    for (const s of this.sockets) s.destroy();
  }

  /** Resets every connection (a TCP RST: the client reads ECONNRESET) and refuses new ones until `restore()`. */
  reset(): void {
    this.state = 'down';
    for (const s of this.sockets) s.resetAndDestroy();
  }

  /**
   * A network partition, as far as a user-space proxy can make one: no byte goes either way, on
   * the open connections or on new ones (accepted, never answered), until `restore()` delivers
   * what was held. The kernel still acknowledges every packet, so keepalives cannot find the
   * silence; a side that closes still closes the other, which stands in for PostgreSQL's
   * keepalive ending a partitioned client's session.
   */
  silence(): void {
    this.state = 'silent';
    for (const d of this.directions) d.hold();
  }

  restore(): void {
    this.state = 'up';
    for (const d of this.directions) d.release();
    const waiting = this.waiting;
    this.waiting = [];
    for (const w of waiting) this.link(w);
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((r) => this.server.close(() => r()));
  }

  private accept(client: net.Socket): void {
    if (this.state === 'down') {
      this.refused++;
      client.destroy();
      return;
    }
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => undefined);
    const pending = new Direction(client);
    if (this.state === 'silent') {
      pending.hold();
      this.waiting.push(pending);
      return;
    }
    this.link(pending);
  }

  /** Connects the client's direction (held or not) to the server, and the server's back. */
  private link(fromClient: Direction): void {
    const client = fromClient.from;
    if (client.destroyed) return;
    const upstream = net.connect(this.targetPort, this.targetHost);
    this.sockets.add(upstream);
    upstream.on('close', () => this.sockets.delete(upstream));
    const fromServer = new Direction(upstream);
    for (const [d, other] of [
      [fromClient, upstream],
      [fromServer, client],
    ] as const) {
      this.directions.add(d);
      d.from.on('close', () => {
        this.directions.delete(d);
        other.destroy();
      });
      d.from.on('error', () => other.destroy());
      d.to(other);
    }
  }
}

/**
 * One direction of a connection: piped to its other side, or (held) still read, so that a close
 * is seen, but kept until released.
 */
class Direction {
  private target: net.Socket | null = null;
  private held: Buffer[] | null = null;
  private readonly keep = (chunk: Buffer) => this.held?.push(chunk);

  constructor(readonly from: net.Socket) {}

  to(target: net.Socket): void {
    this.target = target;
    if (this.held) this.release();
    else this.from.pipe(target);
  }

  hold(): void {
    if (this.held) return;
    this.held = [];
    if (this.target) this.from.unpipe(this.target);
    // unpipe() pauses the socket; read on, or its close would go unseen.
    this.from.on('data', this.keep).resume();
  }

  release(): void {
    if (!this.held || !this.target) return;
    this.from.off('data', this.keep);
    for (const chunk of this.held) this.target.write(chunk);
    this.held = null;
    this.from.pipe(this.target);
  }
}
