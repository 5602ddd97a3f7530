import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { MIGRATIONS } from '../src/platform/database/database.js';
import { buildService, requireRegistry, sparePort, startService, stop } from './support/processes.js';
import { ADMIN_TOKEN, dropRunData, runIdentity, TEST_REDIS_URL } from './support/run-identity.js';
import { until } from './support/until.js';

const ROOT = path.resolve(__dirname, '..');
const SECRETS_KEY = 'packaging-test-secrets-key-0123456789';

/** The runtime stage of the Dockerfile: its instructions, continuation lines joined. */
function runtimeStage(): { instruction: string; args: string }[] {
  const lines = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ').split('\n');
  const parsed = lines.map((l) => /^([A-Z]+)\s+(.*)$/.exec(l.trim())).filter((m) => m !== null);
  const from = parsed.map((m) => m[1]).lastIndexOf('FROM');
  return parsed.slice(from).map((m) => ({ instruction: m[1], args: m[2].trim() }));
}

function execForm(args: string): string[] {
  const json = args.slice(args.indexOf('['));
  return JSON.parse(json) as string[];
}

describe('packaging', () => {
  const runs: { databaseUrl: string; queuePrefix: string; redisUrl: string }[] = [];
  const newRun = () => {
    const run = { ...runIdentity(), redisUrl: TEST_REDIS_URL };
    runs.push(run);
    return run;
  };

  beforeAll(() => buildService(), 180_000);
  afterAll(async () => {
    for (const run of runs) await dropRunData(run);
  });

  it("npm start's build step leaves a current dist/ untouched, so a start never disturbs a running suite", () => {
    const main = path.join(ROOT, 'dist/src/main.js');
    const before = fs.statSync(main);
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const out = execFileSync('sh', ['-c', pkg.scripts.prestart], { cwd: ROOT, encoding: 'utf8' });
    expect(out).toContain('dist/ is current');
    const after = fs.statSync(main);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  });

  it('three processes starting at once on a missing database all serve, and each migration runs once', async () => {
    const run = newRun();
    const env = (role: string) => ({
      PORT: '0',
      ROLE: role,
      DATABASE_URL: run.databaseUrl,
      REDIS_URL: run.redisUrl,
      QUEUE_PREFIX: run.queuePrefix,
      ADMIN_TOKEN,
    });
    const started = await Promise.allSettled([
      startService(env('api')),
      startService(env('worker')),
      startService(env('worker')),
    ]);
    const services = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    try {
      expect(started.filter((s) => s.status === 'rejected').map((s) => String(s.reason))).toEqual([]);
      const pg = new Client({ connectionString: run.databaseUrl });
      await pg.connect();
      try {
        const { rows } = await pg.query<{ name: string; n: number }>(
          'SELECT name, count(*)::int AS n FROM migrations GROUP BY name',
        );
        expect(rows.map((r) => r.n)).toEqual(MIGRATIONS.map(() => 1));
        expect(rows).toHaveLength(MIGRATIONS.length);
      } finally {
        await pg.end();
      }
      for (const service of services) expect(await stop(service, 'SIGTERM')).toBe(0);
    } finally {
      for (const service of services) await stop(service, 'SIGKILL');
    }
  }, 120_000);

  it("the image's command starts from a pruned production install, its HEALTHCHECK passes, and SIGTERM exits 0", async () => {
    requireRegistry();
    const stage = runtimeStage();
    const cmd = execForm(stage.find((s) => s.instruction === 'CMD')!.args);
    const healthcheck = execForm(stage.find((s) => s.instruction === 'HEALTHCHECK')!.args);
    // exec form with node itself: SIGTERM goes to the service, not to npm or a shell
    expect(cmd[0]).toBe('node');
    expect(stage.find((s) => s.instruction === 'USER')?.args).toMatch(/^(?!root\b|0\b)\S+/);
    expect(stage.find((s) => s.instruction === 'ENV')?.args).toContain('NODE_ENV=production');

    // What the runtime stage copies and installs, in a directory of its own.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'funding-runtime-'));
    try {
      for (const step of stage) {
        if (step.instruction === 'COPY') {
          const parts = step.args.split(/\s+/).filter((p) => !p.startsWith('--'));
          const target = parts.pop()!;
          for (const source of parts) {
            const from = path.join(ROOT, source.replace(/^\/app\//, ''));
            const to = target.endsWith('/') ? path.join(dir, target, path.basename(source)) : path.join(dir, target);
            fs.cpSync(from, to, { recursive: true });
          }
        } else if (step.instruction === 'RUN') {
          const command = step.args.replace(/--mount=\S+\s*/g, '');
          expect(command).toMatch(/^npm ci --omit=dev\b/);
          const res = spawnSync('sh', ['-c', command], {
            cwd: dir,
            encoding: 'utf8',
            env: { ...process.env, NODE_ENV: 'production' },
          });
          expect(res.status === 0 ? '' : res.stderr).toBe('');
        }
      }
      expect(fs.existsSync(path.join(dir, 'node_modules/@nestjs/core'))).toBe(true);
      expect(fs.existsSync(path.join(dir, 'node_modules/jest'))).toBe(false); // dev dependencies pruned
      // The compiled service, and the partner guide it serves (docs/partners.md and its pictures).
      expect(fs.readdirSync(path.join(dir, 'dist'))).toEqual(['docs', 'src']);

      const run = newRun();
      const port = await sparePort();
      const env = {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'production',
        PORT: String(port),
        DATABASE_URL: run.databaseUrl,
        REDIS_URL: run.redisUrl,
        QUEUE_PREFIX: run.queuePrefix,
        ADMIN_TOKEN,
        SECRETS_KEY,
      };
      const child = spawn(process.execPath, cmd.slice(1), { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      const output: string[] = [];
      child.stdout.on('data', (d: Buffer) => output.push(d.toString()));
      child.stderr.on('data', (d: Buffer) => output.push(d.toString()));
      try {
        await until(() => output.join('').includes('ready:') || child.exitCode !== null, {
          timeoutMs: 60_000,
          what: 'the service to start',
        });
        expect(output.join('')).toContain(`ready: role=all`);
        const res = await fetch(`http://127.0.0.1:${port}/ready`);
        expect(res.status).toBe(200);
        const guide = await fetch(`http://127.0.0.1:${port}/docs/partners`);
        expect([guide.status, (await guide.text()).includes('<h1 id="integrating-as-a-partner">')]).toEqual([
          200,
          true,
        ]);
        const check = spawnSync(process.execPath, healthcheck.slice(1), {
          cwd: dir,
          env,
          encoding: 'utf8',
          timeout: 10_000,
        });
        expect(check.status).toBe(0);
        expect(await stop(child, 'SIGTERM')).toBe(0);
      } finally {
        await stop(child, 'SIGKILL');
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
