import http from 'node:http';
import { AddressInfo } from 'node:net';
import { IdleSockets } from './idle-sockets.js';

/** A receiver keeping connections alive for a minute, on a port (an origin) of its own. */
async function origin(): Promise<{ url: string; server: http.Server; closed: () => number }> {
  let closed = 0;
  const server = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
  server.keepAliveTimeout = 60_000;
  server.on('connection', (s) => s.on('close', () => closed++));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server, closed: () => closed };
}

function get(agent: http.Agent, url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    http.get(url, { agent }, (res) => res.resume().on('end', () => setImmediate(resolve))).on('error', reject);
  });
}

const idleCount = (agent: http.Agent) => Object.values(agent.freeSockets).reduce((n, s) => n + (s?.length ?? 0), 0);

async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('IdleSockets', () => {
  const origins: Awaited<ReturnType<typeof origin>>[] = [];
  const idle = new IdleSockets(2);
  const agents = [0, 1].map(() => idle.watch(new http.Agent({ keepAlive: true })));
  beforeAll(async () => origins.push(await origin(), await origin(), await origin()));
  afterAll(async () => {
    for (const a of agents) a.destroy();
    for (const o of origins) {
      o.server.closeAllConnections();
      await new Promise((r) => o.server.close(r));
    }
  });

  it('keeps at most its limit of idle connections over every agent, closing the one idle the longest', async () => {
    await get(agents[0], origins[0].url);
    await get(agents[1], origins[1].url);
    expect(idle.size).toBe(2);
    await get(agents[0], origins[2].url);
    await until(() => origins[0].closed() === 1);
    expect(idle.size).toBe(2);
    expect(idleCount(agents[0]) + idleCount(agents[1])).toBe(2);
    expect(origins[1].closed() + origins[2].closed()).toBe(0);
  });

  it('counts a connection taken again as busy, and keeps it again once free', async () => {
    await get(agents[1], origins[1].url);
    expect(idle.size).toBe(2);
    expect(origins[1].closed()).toBe(0);
    // The connection to origins[1] is now the newest: another origin's request closes origins[2]'s.
    await get(agents[1], origins[0].url);
    await until(() => origins[2].closed() === 1);
    expect(origins[1].closed()).toBe(0);
  });

  it('forgets a connection the receiver closed', async () => {
    origins[1].server.closeAllConnections();
    await until(() => idle.size === 1);
    expect(idleCount(agents[1])).toBe(1);
  });
});
