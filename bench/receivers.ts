import http from 'node:http';
import { AddressInfo } from 'node:net';

/**
 * `count` partner endpoints on 127.0.0.1, one port (one destination origin) each, answering 204
 * once a request's body has arrived; `onRequest` notes what the caller counts. Keep-alive
 * outlasts the service's idle sockets, as a partner's load balancer would.
 */
export async function loopbackReceivers(count: number, onRequest: (req: http.IncomingMessage) => void) {
  const servers = Array.from({ length: count }, () => {
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        onRequest(req);
        res.writeHead(204).end();
      });
    });
    server.keepAliveTimeout = 60_000;
    return server;
  });
  await Promise.all(servers.map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', r))));
  const ports = servers.map((s) => (s.address() as AddressInfo).port);
  return {
    ports,
    /** One URL per origin, each ending in `path`. */
    urls: (path = '') => ports.map((port) => `http://127.0.0.1:${port}${path}`),
    close: () => Promise.all(servers.map((s) => new Promise((r) => (s.closeAllConnections(), s.close(r))))),
  };
}

/** A partner endpoint that answers 204 and notes when each path arrived, and how many requests came. */
export async function arrivalReceiver() {
  const arrivals = new Map<string, number>();
  let count = 0;
  const receivers = await loopbackReceivers(1, (req) => {
    count++;
    arrivals.set(req.url ?? '', performance.now());
  });
  return { arrivals, port: receivers.ports[0], count: () => count, close: receivers.close };
}
export type ArrivalReceiver = Awaited<ReturnType<typeof arrivalReceiver>>;
