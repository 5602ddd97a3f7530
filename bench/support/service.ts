// The service as the bench runs it: compiled, in child processes started as `npm start` starts
// it, on a database and queue prefix of the run's own that cleanup() removes.
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Client } from 'pg';
import { deletePrefixKeys, withRedisOnce } from '../../src/platform/database/redis.js';
import { ADMIN, BASE_DB, freePort, REDIS_URL } from './common.js';

const SERVICE_START_MS = 120_000;
/** BENCH_SPLIT=1: a ROLE=api and a ROLE=worker process instead of one ROLE=all. */
export const SPLIT = process.env.BENCH_SPLIT === '1';
/** Delivery and dashboard settings given to the bench go to the service (to compare them). */
export const FORWARDED = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => /^(CALLBACK|DASHBOARD|OTEL)_/.test(k)),
) as Record<string, string>;
export const SETTINGS = Object.keys(FORWARDED).length
  ? Object.entries(FORWARDED)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')
  : 'none';
// The flags `npm start` runs the service with; BENCH_NODE_ARGS adds more, e.g.
// "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the service processes.
const NODE_ARGS = [
  '--max-semi-space-size=16',
  '--heap-growing-percent=50',
  ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
];

/** Service runs not yet cleaned up: an interrupted bench removes them too (see onInterrupt). */
const active = new Set<ServiceRun>();

/**
 * One database (funding_<label>_*), queue prefix and the service processes on it. `start()`
 * starts one ROLE=all, or with BENCH_SPLIT=1 a ROLE=api and a ROLE=worker; `startRole()` one
 * process of any role. `cleanup()` stops them and removes the database and the prefix's keys.
 */
export class ServiceRun {
  readonly suffix = randomBytes(4).toString('hex');
  readonly dbName: string;
  readonly dbUrl: string;
  readonly prefix: string;
  children: ChildProcess[] = [];
  /** Each child's role and port (every role serves /metrics on its port). */
  readonly roles = new Map<ChildProcess, { role: string; port: number }>();
  port = 0;
  pg: Client | null = null;

  constructor(label = 'bench') {
    this.dbName = `funding_${label}_${this.suffix}`;
    this.dbUrl = BASE_DB.replace(/\/[^/]*$/, `/${this.dbName}`);
    this.prefix = `${label}-${this.suffix}`;
    active.add(this);
  }

  /** Starts the service's processes (it creates and migrates the database on its first start) and connects. */
  async start(): Promise<void> {
    if (!this.pg) console.log(`  (service run: database ${this.dbName}, queue prefix ${this.prefix})`);
    this.port = await freePort();
    const roles: [string, number][] = SPLIT
      ? [
          ['api', this.port],
          ['worker', await freePort()],
        ]
      : [['all', this.port]];
    for (const [role, port] of roles) await this.startRole(role, port);
  }

  /** Starts one process and waits for its ready line; it is in `children` from the start (a failed start is cleaned up too). */
  async startRole(role: string, port: number, env: Record<string, string> = {}): Promise<ChildProcess> {
    const child = spawn(process.execPath, [...NODE_ARGS, path.resolve(__dirname, '../../src/main.js')], {
      env: {
        PATH: process.env.PATH ?? '',
        ROLE: role,
        PORT: String(port),
        DATABASE_URL: this.dbUrl,
        REDIS_URL,
        QUEUE_PREFIX: this.prefix,
        ADMIN_TOKEN: ADMIN,
        CALLBACK_ALLOW_HTTP: 'true',
        CALLBACK_ALLOW_PRIVATE_TARGETS: 'true',
        ...FORWARDED,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    this.children.push(child);
    this.roles.set(child, { role, port });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`service (ROLE=${role}) not ready within ${SERVICE_START_MS / 1000} s`)),
        SERVICE_START_MS,
      );
      child.stdout.on('data', (d: Buffer) => {
        // The service's own log lines (a circuit opening or closing, warnings) go through.
        for (const line of d.toString().split('\n'))
          if (line.trim() && !line.includes('ready:')) console.log(`  [${role}] ${line.trim()}`);
        if (d.toString().includes('ready:')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`service (ROLE=${role}) exited with ${code ?? signal}`));
      });
    });
    if (!this.pg) {
      this.pg = new Client({ connectionString: this.dbUrl });
      await this.pg.connect();
    }
    return child;
  }

  pids(): number[] {
    return this.children.map((c) => c.pid!);
  }

  /** The running children: pid, role and port. */
  processes(): { pid: number; role: string; port: number }[] {
    return this.children.map((c) => ({ pid: c.pid!, ...this.roles.get(c)! }));
  }

  /** SIGTERM to one process (in-flight deliveries finish), SIGKILL after 60 s. */
  async stopChild(c: ChildProcess): Promise<void> {
    this.children = this.children.filter((x) => x !== c);
    if (c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    const kill = setTimeout(() => c.kill('SIGKILL'), 60_000);
    await exited;
    clearTimeout(kill);
  }

  /** Stops every process of the run. */
  async stop(): Promise<void> {
    await Promise.all(this.children.map((c) => this.stopChild(c)));
  }

  killNow(): void {
    for (const c of this.children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  }

  async cleanup(): Promise<void> {
    try {
      await this.stop();
      await this.pg?.end().catch(() => undefined);
      this.pg = null;
      const admin = new Client({ connectionString: BASE_DB });
      await admin.connect();
      try {
        await admin.query(`DROP DATABASE IF EXISTS ${this.dbName} WITH (FORCE)`);
      } finally {
        await admin.end();
      }
      // The run's BullMQ keys go too (retries still delayed, the queue's meta and events).
      await withRedisOnce(REDIS_URL, (redis) => deletePrefixKeys(redis, this.prefix));
    } finally {
      active.delete(this);
    }
  }
}

/**
 * However the driver ends (even on an uncaught error), the services end with it; interrupted, it
 * removes the runs' databases and Redis keys first. Then runs `main` and exits with its outcome.
 */
export function runMain(name: string, main: () => Promise<void>): void {
  process.once('exit', () => active.forEach((r) => r.killNow()));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`${name}: ${signal}, removing the runs' databases and Redis keys`);
      setTimeout(() => process.exit(130), 30_000).unref();
      void Promise.all([...active].map((r) => r.cleanup().catch((e: Error) => console.error(e.message)))).finally(() =>
        process.exit(130),
      );
    });
  }
  main().then(
    () => process.exit(0),
    (e: Error) => {
      console.error(e.message);
      process.exit(1);
    },
  );
}
