import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { TestingModuleBuilder } from '@nestjs/testing';
import { Receiver } from './receiver.js';
import { bootAlone, companyWithCallback, createPartner, Partner, startTestApp, TestApp } from './test-app.js';

// What a suite works with once the app is up; the app itself boots only here (test-app.ts is this
// file's private part, and test/code-shape.spec.ts refuses a suite that boots it any other way).
export { bootAlone, companyWithCallback, createPartner };
export type { Partner, TestApp };
export { ADMIN_TOKEN } from './run-identity.js';
export { until } from './until.js';

/** What an end-to-end suite works with: the app, a receiver on 127.0.0.1, and a partner. */
export interface E2e {
  readonly t: TestApp;
  readonly rx: Receiver;
  readonly p: Partner;
}

/** Environment over the test defaults. */
export type Env = Record<string, string>;

export interface HarnessOptions {
  /** Provider overrides on the real AppModule (a shorter interval, a limit of the suite's own). */
  configure?: (b: TestingModuleBuilder) => TestingModuleBuilder;
  /** Runs on the application before its first routes are registered (a suite's own Fastify hooks). */
  beforeSetup?: (app: NestFastifyApplication) => void;
  /**
   * The name of the partner made once the app is up (default `Acme Bank`); `null` when the suite
   * makes every partner itself, because a list, a count or the audit log would see one more.
   */
  partner?: string | null;
}

/**
 * The one end-to-end set-up: in the suite's beforeAll, a receiver, the real app on a database and
 * queue prefix of its own (`env` over the test defaults), and a partner; all closed in its
 * afterAll, also when the start failed. Read the parts once beforeAll has run
 * (`beforeAll(() => ({ t, p, rx } = e2e))`).
 *
 * `env` is a function when it names something an earlier beforeAll of the suite started (its own
 * Redis, a proxy in front of PostgreSQL): hooks run in the order they are declared, beforeAll and
 * afterAll alike, so a suite declares what the app needs before calling harness() and stops it in
 * an afterAll declared after. Several apps at once are several calls, each with its own database.
 */
export function harness(env: Env | (() => Env) = {}, options: HarnessOptions = {}): E2e {
  const { configure, beforeSetup, partner = 'Acme Bank' } = options;
  const parts: { -readonly [K in keyof E2e]?: E2e[K] } = {};
  beforeAll(async () => {
    parts.rx = await Receiver.start();
    parts.t = await startTestApp(typeof env === 'function' ? env() : env, configure, beforeSetup);
    if (partner !== null) parts.p = await createPartner(parts.t, partner);
  });
  afterAll(async () => {
    await parts.t?.close();
    await parts.rx?.close();
  });
  const part = <K extends keyof E2e>(k: K): E2e[K] => {
    if (!parts[k])
      throw new Error(
        k === 'p' && partner === null
          ? 'this harness makes no partner (partner: null)'
          : `the harness's ${k} is read before its beforeAll ran`,
      );
    return parts[k];
  };
  return {
    get t() {
      return part('t');
    },
    get rx() {
      return part('rx');
    },
    get p() {
      return part('p');
    },
  };
}
