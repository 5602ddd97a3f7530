// A child process of the bench (dead-origins.ts starts it): `count` dead origins from origin number
// `first`, each its own loopback address (originAddress) on `port`. Each accepts connections and
// never answers until the parent says `recover`; from then on it answers 204 at once, including
// the requests it held. It reports its figures to the parent every half second and when asked.
import http from 'node:http';
import { DeadOriginStats, HostCommand, originAddress } from './dead-origins.js';

const [first, count, port] = process.argv.slice(2).map(Number);
const connections = new Array<number>(count).fill(0);
/** Held requests' answers, and the webhook-ids already answered with a 2xx (a redelivery counts once). */
const hanging = new Set<() => void>();
const answered = new Set<string>();
let answering = false;
let held = 0;
let lastAt = NaN;

function origin(i: number): http.Server {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['webhook-id'] ?? req.url);
      const answer = () => {
        hanging.delete(answer);
        if (res.writableEnded || !res.socket || res.socket.destroyed) return; // the sender gave up
        res.writeHead(204).end();
        if (answered.has(id)) return;
        answered.add(id);
        lastAt = Date.now();
      };
      if (answering) return answer();
      hanging.add(answer);
      res.on('close', () => hanging.delete(answer));
    });
  });
  server.on('connection', () => connections[i]++);
  server.keepAliveTimeout = 60_000;
  return server;
}

const servers = Array.from({ length: count }, (_, i) => origin(i));

function stats(reply: boolean): DeadOriginStats {
  const m = process.memoryUsage();
  return { type: 'stats', connections, answered: answered.size, lastAt, held, rss: m.rss, heapUsed: m.heapUsed, reply };
}

process.on('message', (c: HostCommand) => {
  if (c.type === 'recover') {
    answering = true;
    held = hanging.size;
    for (const answer of [...hanging]) answer();
  }
  if (c.type === 'close') {
    servers.forEach((s) => s.closeAllConnections());
    void Promise.all(servers.map((s) => new Promise((r) => s.close(r)))).then(() => process.exit(0));
    return;
  }
  process.send!(stats(true));
});

void (async () => {
  try {
    await Promise.all(
      servers.map(
        (s, i) =>
          new Promise<void>((resolve, reject) =>
            s.once('error', reject).listen(port, originAddress(first + i), resolve),
          ),
      ),
    );
    setInterval(() => process.send!(stats(false)), 500).unref();
    process.send!({ type: 'ready' });
  } catch (e) {
    process.send!({ type: 'failed', error: (e as Error).message });
    process.exit(1);
  }
})();
process.on('disconnect', () => process.exit(0)); // the bench ended
