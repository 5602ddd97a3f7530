import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { buildService, sparePorts, stop } from './support/processes.js';
import { RedisCluster, startClusterNodesWithoutSlots } from './support/redis-cluster.js';
import { ADMIN_TOKEN, dropRunData, runIdentity } from './support/run-identity.js';
import { until } from './support/until.js';

const ROOT = path.resolve(__dirname, '..');

/**
 * Start-up never ends silently: whatever Redis answers, `node dist/src/main.js` either waits,
 * saying what for, or exits non-zero naming the cause (a supervisor reads exit 0 as a deliberate
 * stop and does not restart the service).
 */
describe('start-up against a Redis that does not serve', () => {
  const run = runIdentity();
  /** Where the Redis servers started here may write (a replica's first sync writes an RDB file). */
  const dir = mkdtempSync(path.join(os.tmpdir(), 'startup-redis-'));
  const started: ChildProcess[] = [];
  const servers: (ChildProcess | net.Server)[] = [];
  let nodes: RedisCluster | undefined;

  beforeAll(() => buildService(), 120_000);
  afterAll(async () => {
    await Promise.all(started.map((c) => stop(c, 'SIGKILL')));
    for (const s of servers) {
      if (s instanceof net.Server) await new Promise((r) => s.close(r));
      else await stop(s, 'SIGTERM');
    }
    await nodes?.stop();
    rmSync(dir, { recursive: true, force: true });
    await dropRunData({ databaseUrl: run.databaseUrl, redisUrl: 'redis://127.0.0.1:1', queuePrefix: run.queuePrefix });
  });

  /** The service with this REDIS_URL; its output so far, and its exit code once it exits. */
  function service(redisUrl: string) {
    const child = spawn(process.execPath, [path.join(ROOT, 'dist/src/main.js')], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        DATABASE_URL: run.databaseUrl,
        REDIS_URL: redisUrl,
        QUEUE_PREFIX: run.queuePrefix,
        ADMIN_TOKEN,
        PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    started.push(child);
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    return {
      output: () => output,
      exited: async () => {
        await until(() => child.exitCode !== null || child.signalCode !== null, {
          timeoutMs: 30_000,
          what: `the service to exit (output so far: ${output})`,
        });
        return { code: child.exitCode, output };
      },
      running: () => child.exitCode === null && child.signalCode === null,
    };
  }

  async function redisServer(port: number, ...args: string[]): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...args],
      { stdio: 'ignore' },
    );
    servers.push(child);
    await until(
      () =>
        new Promise<boolean>((resolve) =>
          net
            .connect(port, '127.0.0.1', function (this: net.Socket) {
              this.destroy();
              resolve(true);
            })
            .on('error', () => resolve(false)),
        ),
      { what: `redis-server on ${port}` },
    );
  }

  it('exits 1 naming cluster_state:fail when one seed is a cluster node without slots and the other refuses connections', async () => {
    nodes = await startClusterNodesWithoutSlots(1);
    const [refused] = await sparePorts(1);
    const { code, output } = await service(`${nodes.url},redis://127.0.0.1:${refused}`).exited();
    expect(code).toBe(1);
    expect(output).toMatch(/failed to start: Redis Cluster at .* cannot serve this service/);
    expect(output).toContain(`127.0.0.1:${nodes.ports[0]}: cluster_state:fail, 0 of 16384 slots assigned`);
    expect(output).toContain(`127.0.0.1:${refused}: connect ECONNREFUSED`);
  });

  it('exits 1 naming CLUSTERDOWN when that node is REDIS_URL alone', async () => {
    nodes ??= await startClusterNodesWithoutSlots(1);
    const { code, output } = await service(nodes.url).exited();
    expect(code).toBe(1);
    expect(output).toMatch(/cannot serve this service: CLUSTERDOWN/);
  });

  it('exits 1 naming a wrong password, and a replica', async () => {
    const [secured, master, replica] = await sparePorts(3);
    await redisServer(secured, '--requirepass', 'right-password');
    await redisServer(master);
    await redisServer(replica, '--replicaof', '127.0.0.1', String(master));
    const wrong = await service(`redis://:wrong-password@127.0.0.1:${secured}`).exited();
    expect(wrong.code).toBe(1);
    expect(wrong.output).toMatch(/cannot serve this service: WRONGPASS/);
    const readOnly = await service(`redis://127.0.0.1:${replica}`).exited();
    expect(readOnly.code).toBe(1);
    expect(readOnly.output).toMatch(/cannot serve this service: it is a replica \(read-only\)/);
  });

  it('waits for a Redis loading its dataset, saying so', async () => {
    // Answers every command as a Redis still loading its dataset does.
    const loading = net.createServer((s) =>
      s.on('data', (d) => {
        for (const _ of d.toString().match(/^\*\d+\r$/gm) ?? [])
          s.write('-LOADING Redis is loading the dataset in memory\r\n');
      }),
    );
    servers.push(loading);
    const [port] = await sparePorts(1);
    await new Promise<void>((r) => loading.listen(port, '127.0.0.1', r));
    const s = service(`redis://127.0.0.1:${port}`);
    await until(
      () => s.output().includes(`waiting for Redis at 127.0.0.1:${port}: it is loading its dataset into memory`),
      { timeoutMs: 30_000, what: 'the waiting line' },
    );
    expect(s.running()).toBe(true);
  });
});
