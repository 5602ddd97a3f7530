import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants } from 'node:fs';
import net, { AddressInfo } from 'node:net';
import path from 'node:path';

import type { TestApp } from './harness.js';
import { ADMIN_TOKEN } from './run-identity.js';

const ROOT = path.resolve(__dirname, '../..');

/** A ROLE=worker child process on the test app's database, Redis and queue prefix. */
export const workerEnv = (t: TestApp): Record<string, string> => ({
  ROLE: 'worker',
  PORT: '0',
  DATABASE_URL: t.config.databaseUrl,
  REDIS_URL: t.config.redisUrl,
  QUEUE_PREFIX: t.config.queuePrefix,
  ADMIN_TOKEN,
  CALLBACK_ALLOW_HTTP: 'true',
  CALLBACK_ALLOW_PRIVATE_TARGETS: 'true',
});

/** Compiles the service for tests that run it as a real child process, as `npm start` does (only when stale). */
export function buildService(): void {
  execFileSync(process.execPath, [path.join(ROOT, 'scripts/build.mjs')], { cwd: ROOT, stdio: 'inherit' });
}

/** Starts `node dist/src/main.js` with the given environment; resolves once it logs "ready". */
export async function startService(
  env: Record<string, string>,
): Promise<ChildProcess & { output: string[]; out: string[]; err: string[] }> {
  const child = spawn(process.execPath, [path.join(ROOT, 'dist/src/main.js')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  }) as ChildProcess & { output: string[]; out: string[]; err: string[] };
  // Both streams in order of arrival (output), and each alone (out: stdout, err: stderr).
  child.output = [];
  child.out = [];
  child.err = [];
  const ready = new Promise<void>((resolve, reject) => {
    const onData = (stream: string[]) => (d: Buffer) => {
      child.output.push(d.toString());
      stream.push(d.toString());
      if (d.toString().includes('ready:')) resolve();
    };
    child.stdout!.on('data', onData(child.out));
    child.stderr!.on('data', onData(child.err));
    child.once('exit', (code) =>
      reject(new Error(`service exited with ${code} before ready: ${child.output.join('')}`)),
    );
  });
  await ready;
  return child;
}

export async function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = once(child, 'exit');
  child.kill(signal);
  const [code] = (await exited) as [number | null];
  return code;
}

export async function sparePort(): Promise<number> {
  return (await sparePorts(1))[0];
}

/**
 * `count` distinct spare ports: each is held until all are picked, since a port picked and
 * released may be the very next one picked (two cluster nodes on one port).
 */
export async function sparePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => net.createServer());
  await Promise.all(servers.map((server) => new Promise<void>((r) => server.listen(0, '127.0.0.1', r))));
  const ports = servers.map((server) => (server.address() as AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((r) => server.close(r))));
  return ports;
}

/**
 * Throws at once, naming what to install, when something a test needs is not there: never a
 * timeout or a spawn error later. `need` is the name TEST_WITHOUT takes (jest.config.js) to leave
 * the tests that need it out.
 */
export function requireExecutable(file: string, what: string, install: string, need: string): void {
  const candidates = file.includes('/')
    ? [file]
    : (process.env.PATH ?? '').split(path.delimiter).map((dir) => path.join(dir, file));
  const found = candidates.some((candidate) => {
    try {
      accessSync(candidate, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
  if (!found)
    throw new Error(
      `${file} is missing (${what}). Install it: ${install}; or leave these tests out: TEST_WITHOUT=${need} npm test`,
    );
}

/** The npm registry answers (the packaging test installs the production dependencies as the image does). */
export function requireRegistry(): void {
  try {
    execFileSync('npm', ['ping', '--fetch-retries=0', '--fetch-timeout=10000'], {
      cwd: ROOT,
      stdio: 'pipe',
      timeout: 30_000,
    });
  } catch (e) {
    const output = String((e as { stderr?: Buffer }).stderr ?? '');
    const said =
      (/^npm error FetchError: .*$/m.exec(output) ?? /^npm error (?:code \S+|\d{3} .*)$/m.exec(output))?.[0] ??
      (e as Error).message;
    throw new Error(
      `the npm registry does not answer \`npm ping\` (${said}): this test runs \`npm ci --omit=dev\` as the image does. Give this machine access to the registry npm is configured with; or leave this test out: TEST_WITHOUT=registry npm test`,
      { cause: e },
    );
  }
}

/** A private redis-server on its own port, for tests that stop and restart Redis. */
export async function startRedis(port: number): Promise<ChildProcess> {
  requireExecutable(
    'redis-server',
    'the Redis fault tests start their own redis-server',
    'apt-get install -y redis-server',
    'redis-server',
  );
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (up) return child;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server on ${port} did not start`);
}
