import http from 'node:http';
import { buildService, startService, stop } from './support/processes.js';
import { ADMIN_TOKEN, dropRunData, runIdentity, TEST_REDIS_URL } from './support/run-identity.js';
import { until } from './support/until.js';

/** The service's own HTTP server (`node dist/src/main.js`), as clients and load balancers meet it. */
describe('HTTP server connections', () => {
  const run = { ...runIdentity(), redisUrl: TEST_REDIS_URL };

  beforeAll(() => buildService(), 180_000);
  afterAll(() => dropRunData(run));

  it('keeps an idle keep-alive connection 65 s, and SIGTERM still closes it at once', async () => {
    const service = await startService({
      PORT: '0',
      DATABASE_URL: run.databaseUrl,
      REDIS_URL: run.redisUrl,
      QUEUE_PREFIX: run.queuePrefix,
      ADMIN_TOKEN,
    });
    const port = Number(/port=(\d+)/.exec(service.output.join(''))![1]);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const res = await new Promise<http.IncomingMessage>((resolve, reject) =>
        http
          .get({ host: '127.0.0.1', port, path: '/health', agent }, (r) => r.resume().on('end', () => resolve(r)))
          .on('error', reject),
      );
      // Node announces its keepAliveTimeout; its default of 5 s would race clients' reuse.
      expect(res.headers['keep-alive']).toBe('timeout=65');
      const [socket] = Object.values(agent.freeSockets).flat();
      expect(socket).toBeDefined();
      let closed = false;
      socket!.once('close', () => (closed = true));
      expect(await stop(service, 'SIGTERM')).toBe(0);
      await until(() => closed, { what: 'idle connection closed by the shutdown' });
    } finally {
      agent.destroy();
      await stop(service, 'SIGKILL');
    }
  }, 60_000);
});
