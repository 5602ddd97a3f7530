import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test, TestingModuleBuilder } from '@nestjs/testing';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import request from 'supertest';
import { AppModule } from '../../src/app.module.js';
import { PARTNER_RATE_LIMIT } from '../../src/partners/rate-limiter.js';
import { AppConfig, loadConfig } from '../../src/platform/config/app-config.js';
import { deletePrefixKeys, withRedisOnce } from '../../src/platform/database/redis.js';
import { createHttpAdapter, setupApp } from '../../src/setup-app.js';
import { ApiContract, checked, loadApiContract } from './openapi-contract.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
const BASE_DB = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/funding_service_test';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface TestApp {
  app: NestFastifyApplication;
  config: AppConfig;
  /** The service's /docs-json, which every response of the requests below is checked against. */
  contract: ApiContract;
  http: () => ReturnType<typeof request>;
  admin: (method: 'get' | 'post' | 'patch' | 'put' | 'delete', path: string, body?: object) => request.Test;
  as: (apiKey: string, method: 'get' | 'post' | 'patch' | 'put' | 'delete', path: string, body?: object) => request.Test;
  sql: <T = Record<string, unknown>>(text: string, params?: unknown[]) => Promise<T[]>;
  close: () => Promise<void>;
}

/** A fresh database and queue prefix per test file, so runs and files never see each other. */
export async function startTestApp(
  env: Record<string, string> = {},
  configure: (builder: TestingModuleBuilder) => TestingModuleBuilder = (b) => b,
  /** Runs on the application before setupApp, which registers the first routes (a test's own Fastify hooks). */
  beforeSetup: (app: NestFastifyApplication) => void = () => undefined,
): Promise<TestApp> {
  const run = runIdentity();
  const config = loadConfig({
    DATABASE_URL: run.databaseUrl,
    REDIS_URL: TEST_REDIS_URL,
    QUEUE_PREFIX: run.queuePrefix,
    ADMIN_TOKEN,
    CALLBACK_ALLOW_HTTP: 'true',
    CALLBACK_ALLOW_PRIVATE_TARGETS: 'true',
    ...env,
  });
  // One partner per suite makes hundreds of requests a second here; the partner rate limit has
  // its own suite (which overrides this again).
  const builder = Test.createTestingModule({ imports: [AppModule.forRoot(config)] }).overrideProvider(PARTNER_RATE_LIMIT).useValue(1_000_000);
  const moduleRef = await configure(builder).compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(createHttpAdapter(), { bodyParser: false, logger: ['error', 'warn'] });
  // The test's own connection goes to PostgreSQL directly, even when the app's goes through a proxy.
  const direct = new URL(BASE_DB);
  direct.pathname = new URL(config.databaseUrl).pathname;
  const pg = new Client({ connectionString: direct.toString() });
  let contract: ApiContract;
  try {
    beforeSetup(app);
    setupApp(app, config);
    await app.init();
    // Fastify loads its plugins (the dashboard, Swagger UI's assets) on ready; then it serves.
    await app.getHttpAdapter().getInstance().ready();
    await pg.connect();
    contract = await loadApiContract((await request(app.getHttpServer()).get('/docs-json').expect(200)).body);
  } catch (e) {
    await app.close().catch(() => undefined);
    await pg.end().catch(() => undefined);
    throw e;
  }
  const server = app.getHttpServer();
  const send = (auth: string, method: 'get' | 'post' | 'patch' | 'put' | 'delete', path: string, body?: object) => {
    const r = checked(request(server)[method](path), contract).set('Authorization', auth);
    return body === undefined ? r : r.send(body);
  };
  // Every request method of the agent returns a checked request.
  const http = () =>
    new Proxy(request(server), {
      get: (agent, key, receiver) => {
        const value = Reflect.get(agent, key, receiver);
        return typeof value === 'function' ? (...args: unknown[]) => checked(value.apply(agent, args), contract) : value;
      },
    });
  // The test's own session, one query at a time (pg@9 refuses a query while another runs on a
  // client); a session, so a SET or an advisory lock holds from one call to the next.
  let last: Promise<unknown> = Promise.resolve();
  const oneAtATime = <R>(query: () => Promise<R>): Promise<R> => {
    const run = last.then(query);
    last = run.catch(() => undefined);
    return run;
  };
  return {
    app,
    config,
    contract,
    http,
    admin: (method, path, body) => send(`Bearer ${ADMIN_TOKEN}`, method, path, body),
    as: (apiKey, method, path, body) => send(`Bearer ${apiKey}`, method, path, body),
    sql: (text, params) => oneAtATime(() => pg.query(text, params as unknown[])).then((r) => r.rows),
    close: async () => {
      await app.close();
      await pg.end();
      await dropRunData(config);
    },
  };
}

/** A database URL and queue prefix of their own, beside the base test database. */
export function runIdentity(): { databaseUrl: string; queuePrefix: string } {
  const suffix = randomBytes(5).toString('hex');
  const url = new URL(BASE_DB);
  url.pathname = `/${url.pathname.slice(1)}_${suffix}`;
  return { databaseUrl: url.toString(), queuePrefix: `test-${suffix}` };
}

/** Drops a run's database and its BullMQ keys. */
export async function dropRunData(c: { databaseUrl: string; redisUrl: string; queuePrefix: string }): Promise<void> {
  await dropQueueKeys(c.redisUrl, c.queuePrefix);
  const admin = new Client({ connectionString: BASE_DB.replace(/\/[^/]*$/, '/postgres') });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${new URL(c.databaseUrl).pathname.slice(1)}" WITH (FORCE)`).catch(() => undefined);
  await admin.end();
}

/** Removes this run's BullMQ keys, so test runs leave nothing behind in the shared Redis. */
async function dropQueueKeys(url: string, prefix: string): Promise<void> {
  // A test that stopped its own Redis (or cluster) has nothing left to clean.
  await withRedisOnce(url, (redis) => deletePrefixKeys(redis, prefix)).catch(() => undefined);
}

export interface Partner {
  id: string;
  apiKey: string;
  signingSecret: string;
}

export async function createPartner(t: TestApp, name = 'Acme Bank'): Promise<Partner> {
  const res = await t.admin('post', '/admin/v1/partners', { name }).expect(201);
  return res.body as Partner;
}

/** Waits for a condition with a deadline, polling: never a bare sleep. */
export async function until<T>(fn: () => T | Promise<T>, { timeoutMs = 10000, intervalMs = 20, what = 'condition' } = {}): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * A company whose every operator credit change sends exactly one callback (message 0: a terms
 * change) to `url`. `change()` returns the new callback's id.
 */
export async function companyWithCallback(t: TestApp, p: Partner, url: string) {
  const c = (await t.as(p.apiKey, 'post', '/v1/companies', { name: 'F', status_callback: url }).expect(201)).body.id as string;
  let days = 0;
  return {
    c,
    change: async (): Promise<string> => {
      days += 1;
      await t.admin('patch', `/admin/v1/companies/${c}/credit`, { repaymentTermDays: days }).expect(200);
      const [row] = await t.sql<{ id: string }>('SELECT id FROM callbacks WHERE company_id = $1 ORDER BY seq DESC LIMIT 1', [c]);
      return row.id;
    },
    statuses: async () => (await t.sql<{ status: string }>('SELECT status FROM callbacks WHERE company_id = $1 ORDER BY seq', [c])).map((r) => r.status),
  };
}
