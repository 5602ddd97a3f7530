import net, { AddressInfo } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of a real server (PostgreSQL here), which a test can take
 * down (every connection cut, new ones refused and counted) and bring back: an outage of that
 * server for the app only, without stopping the server the other tests share.
 */
export class TcpProxy {
  refused = 0;
  private up = true;
  private readonly sockets = new Set<net.Socket>();

  private constructor(private readonly server: net.Server) {}

  static async start(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
    const proxy: TcpProxy = new TcpProxy(
      net.createServer((client) => {
        if (!proxy.up) {
          proxy.refused++;
          client.destroy();
          return;
        }
        const upstream = net.connect(targetPort, targetHost);
        for (const [a, b] of [
          [client, upstream],
          [upstream, client],
        ]) {
          proxy.sockets.add(a);
          a.on('close', () => {
            proxy.sockets.delete(a);
            b.destroy();
          });
          a.on('error', () => b.destroy());
          a.pipe(b);
        }
      }),
    );
    await new Promise<void>((r) => proxy.server.listen(0, '127.0.0.1', r));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Cuts every connection and refuses new ones until `restore()`. */
  cut(): void {
    this.up = false;
    for (const s of this.sockets) s.destroy();
  }

  /** Resets every connection (a TCP RST: the client reads ECONNRESET) and refuses new ones until `restore()`. */
  reset(): void {
    this.up = false;
    for (const s of this.sockets) s.resetAndDestroy();
  }

  restore(): void {
    this.up = true;
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((r) => this.server.close(() => r()));
  }
}
