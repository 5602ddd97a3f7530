// The app booted in this process: private to harness.ts, which every end-to-end suite starts it through
// (test/code-shape.spec.ts holds that).
import type { DynamicModule } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test, TestingModuleBuilder } from '@nestjs/testing';
import { Client } from 'pg';
import request from 'supertest';
import { AppModule } from '../../src/app.module.js';
import { dataSourceOptions } from '../../src/data-source.js';
import { databaseModule } from '../../src/platform/platform.module.js';
import { PARTNER_RATE_LIMIT } from '../../src/partners/rate-limiter.js';
import { AppConfig, loadConfig } from '../../src/platform/config/app-config.js';
import { createHttpAdapter, setupApp } from '../../src/setup-app.js';
import { ApiContract, checked, loadApiContract } from './openapi-contract.js';
import { ADMIN_TOKEN, BASE_DB, dropRunData, runIdentity, TEST_REDIS_URL } from './run-identity.js';

export interface TestApp {
  app: NestFastifyApplication;
  config: AppConfig;
  /** The service's /docs-json, which every response of the requests below is checked against. */
  contract: ApiContract;
  http: () => ReturnType<typeof request>;
  admin: (method: 'get' | 'post' | 'patch' | 'put' | 'delete', path: string, body?: object) => request.Test;
  as: (
    apiKey: string,
    method: 'get' | 'post' | 'patch' | 'put' | 'delete',
    path: string,
    body?: object,
  ) => request.Test;
  sql: <T = Record<string, unknown>>(text: string, params?: unknown[]) => Promise<T[]>;
  close: () => Promise<void>;
}

/** The test defaults (a fresh database and queue prefix each call), `env` over them. */
function testConfig(env: Record<string, string>): AppConfig {
  const run = runIdentity();
  return loadConfig({
    DATABASE_URL: run.databaseUrl,
    REDIS_URL: TEST_REDIS_URL,
    QUEUE_PREFIX: run.queuePrefix,
    ADMIN_TOKEN,
    CALLBACK_ALLOW_HTTP: 'true',
    CALLBACK_ALLOW_PRIVATE_TARGETS: 'true',
    ...env,
  });
}

/** Nest's own modules, the testing root and TypeORM's: not the service's. */
const FRAMEWORK_MODULES = new Set(['InternalCoreModule', 'RootTestModule', 'TypeOrmModule', 'TypeOrmCoreModule']);

/**
 * One of the service's modules alone (`env` over the test defaults: its ROLE), on a database and
 * queue prefix of its own: with the imports it declares and the database the application's root
 * gives every module, compiled, started (its workers and timers too) and closed. Returns the
 * service's modules Nest built for it.
 */
export async function bootAlone(
  module: (config: AppConfig) => DynamicModule,
  env: Record<string, string> = {},
): Promise<string[]> {
  const config = testConfig(env);
  try {
    const moduleRef = await Test.createTestingModule({
      imports: [module(config), databaseModule(config, dataSourceOptions)],
    }).compile();
    const app = moduleRef.createNestApplication<NestFastifyApplication>(createHttpAdapter(), {
      bodyParser: false,
      logger: ['error', 'warn'],
    });
    try {
      await app.init();
      const names = [...app.get(ModulesContainer).values()].map((m) => m.metatype.name);
      return names.filter((name) => !FRAMEWORK_MODULES.has(name)).sort();
    } finally {
      await app.close();
    }
  } finally {
    // Also when a provider the module does not import stopped the compile.
    await dropRunData(config);
  }
}

/** A fresh database and queue prefix per test file, so runs and files never see each other. */
export async function startTestApp(
  env: Record<string, string> = {},
  configure: (builder: TestingModuleBuilder) => TestingModuleBuilder = (b) => b,
  /** Runs on the application before setupApp, which registers the first routes (a test's own Fastify hooks). */
  beforeSetup: (app: NestFastifyApplication) => void = () => undefined,
): Promise<TestApp> {
  const config = testConfig(env);
  // One partner per suite makes hundreds of requests a second here; the partner rate limit has
  // its own suite (which overrides this again).
  const builder = Test.createTestingModule({ imports: [AppModule.forRoot(config)] })
    .overrideProvider(PARTNER_RATE_LIMIT)
    .useValue(1_000_000);
  const moduleRef = await configure(builder).compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(createHttpAdapter(), {
    bodyParser: false,
    logger: ['error', 'warn'],
  });
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
    contract = await loadApiContract((await request(app.getHttpServer()).get('/docs-json').expect(200)).body as object);
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
        const value: unknown = Reflect.get(agent, key, receiver);
        if (typeof value !== 'function') return value;
        const method = value as (...args: unknown[]) => request.Test;
        return (...args: unknown[]) => checked(method.apply(agent, args), contract);
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
    sql: <T>(text: string, params?: unknown[]) => oneAtATime(() => pg.query(text, params)).then((r) => r.rows as T[]),
    close: async () => {
      await app.close();
      await pg.end();
      await dropRunData(config);
    },
  };
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

/**
 * A company whose every operator credit change sends exactly one callback (message 0: a terms
 * change) to `url`. `change()` returns the new callback's id.
 */
export async function companyWithCallback(t: TestApp, p: Partner, url: string) {
  const c = (
    (await t.as(p.apiKey, 'post', '/v1/companies', { name: 'F', status_callback: url }).expect(201)).body as {
      id: string;
    }
  ).id;
  let days = 0;
  return {
    c,
    change: async (): Promise<string> => {
      days += 1;
      await t.admin('patch', `/admin/v1/companies/${c}/credit`, { repaymentTermDays: days }).expect(200);
      const [row] = await t.sql<{ id: string }>(
        'SELECT id FROM callbacks WHERE company_id = $1 ORDER BY seq DESC LIMIT 1',
        [c],
      );
      return row.id;
    },
    statuses: async () =>
      (await t.sql<{ status: string }>('SELECT status FROM callbacks WHERE company_id = $1 ORDER BY seq', [c])).map(
        (r) => r.status,
      ),
  };
}
