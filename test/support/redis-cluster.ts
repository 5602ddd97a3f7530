import { ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { requireExecutable, sparePorts } from './processes.js';
import { until } from './until.js';

const run = promisify(execFile);

// Checked when a test file loads this: without them it fails at once, saying what to install.
for (const program of ['redis-server', 'redis-cli']) {
  requireExecutable(
    program,
    'the Redis Cluster test starts three redis-server nodes and joins them with redis-cli',
    'apt-get install -y redis-server (it brings redis-cli)',
    'redis-server',
  );
}

export interface RedisCluster {
  ports: number[];
  /** REDIS_URL naming every master as a seed node. */
  url: string;
  stop: () => Promise<void>;
}

/**
 * A Redis Cluster of `masters` redis-server processes (no replicas) on spare loopback ports, in
 * a temporary directory; never the machine's shared Redis. Each node's cluster bus port is
 * chosen too: the default (port + 10000) can lie past 65535 for an ephemeral port. A spare port
 * is only free when it is picked: if a node exits before it answers (another socket took its
 * port meanwhile), the cluster is started again on fresh ports, up to three times.
 */
export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  return onFreshPorts(() => tryStartRedisCluster(masters, createCluster));
}

/**
 * Cluster-mode redis-server nodes that were never joined: up, answering, with no slots assigned
 * (`cluster_state:fail`), as a cluster is before `redis-cli --cluster create` or after losing its
 * configuration.
 */
export async function startClusterNodesWithoutSlots(count = 1): Promise<RedisCluster> {
  return onFreshPorts(() => tryStartRedisCluster(count, () => Promise.resolve()));
}

async function onFreshPorts(start: () => Promise<RedisCluster>): Promise<RedisCluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (e) {
      if (!(e instanceof NodeExited) || attempt === 3) throw e;
    }
  }
}

/** Joins the nodes into one cluster, the slots spread over them, and waits until every node knows the whole map. */
async function createCluster(ports: number[]): Promise<void> {
  await run('redis-cli', [
    '--cluster',
    'create',
    ...ports.map((p) => `127.0.0.1:${p}`),
    '--cluster-replicas',
    '0',
    '--cluster-yes',
  ]);
  await until(
    async () =>
      (await Promise.all(ports.map((p) => cli(p, 'cluster', 'info')))).every((info) => /cluster_state:ok/.test(info)),
    {
      timeoutMs: 15_000,
      what: 'cluster_state:ok on every node',
    },
  );
}

/** A node that exited before the cluster was up, with the end of what it printed. */
class NodeExited extends Error {}

async function tryStartRedisCluster(masters: number, join: (ports: number[]) => Promise<void>): Promise<RedisCluster> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'redis-cluster-'));
  const ports: number[] = [];
  const nodes: ChildProcess[] = [];
  const output = new Map<ChildProcess, string>();
  const stop = async () => {
    await Promise.all(
      nodes.map(async (n) => {
        if (n.exitCode !== null || n.signalCode !== null) return;
        const exited = once(n, 'exit');
        n.kill('SIGTERM');
        await exited;
      }),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  const exitedNode = () => {
    const n = nodes.find((x) => x.exitCode !== null || x.signalCode !== null);
    if (n)
      throw new NodeExited(
        `redis-server on port ${ports[nodes.indexOf(n)]} exited (${n.exitCode ?? n.signalCode}): ${output.get(n)?.trim() ?? ''}`,
      );
  };
  try {
    const spare = await sparePorts(2 * masters);
    for (let i = 0; i < masters; i++) {
      const [port, bus] = [spare[2 * i], spare[2 * i + 1]];
      const nodeDir = path.join(dir, String(port));
      mkdirSync(nodeDir);
      const args = [
        '--port',
        String(port),
        '--cluster-port',
        String(bus),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
      ];
      args.push(
        '--cluster-config-file',
        path.join(nodeDir, 'nodes.conf'),
        '--dir',
        nodeDir,
        '--save',
        '',
        '--appendonly',
        'no',
      );
      const node = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      // Its last lines, to say why it stopped if it does.
      const keep = (chunk: Buffer) => output.set(node, ((output.get(node) ?? '') + chunk.toString()).slice(-500));
      node.stdout.on('data', keep);
      node.stderr.on('data', keep);
      nodes.push(node);
      ports.push(port);
    }
    await until(
      async () => {
        exitedNode();
        return (await Promise.all(ports.map((p) => cli(p, 'ping').catch(() => '')))).every((r) => r === 'PONG');
      },
      { what: 'redis-server nodes up' },
    );
    await join(ports);
  } catch (e) {
    await stop();
    throw e;
  }
  return { ports, url: ports.map((p) => `redis://127.0.0.1:${p}`).join(','), stop };
}

async function cli(port: number, ...command: string[]): Promise<string> {
  // Bounded: whatever else holds the port may accept and never answer.
  return (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...command], { timeout: 2000 })).stdout.trim();
}
