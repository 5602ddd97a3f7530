import type { TestingModuleBuilder } from '@nestjs/testing';
import { Receiver } from './receiver.js';
import { createPartner, Partner, startTestApp, TestApp } from './test-app.js';

/** What an end-to-end suite works with: the app, a receiver on 127.0.0.1, and a partner. */
export interface E2e {
  readonly t: TestApp;
  readonly rx: Receiver;
  readonly p: Partner;
}

/**
 * The one end-to-end set-up: in the suite's beforeAll, a receiver, the real app on a database and
 * queue prefix of its own (`env` over the test defaults), and a partner; all closed in its
 * afterAll, also when the start failed. Read the parts once beforeAll has run
 * (`beforeAll(() => ({ t, p, rx } = e2e))`).
 */
export function harness(env: Record<string, string> = {}, configure?: (b: TestingModuleBuilder) => TestingModuleBuilder): E2e {
  const parts: { -readonly [K in keyof E2e]?: E2e[K] } = {};
  beforeAll(async () => {
    parts.rx = await Receiver.start();
    parts.t = await startTestApp(env, configure);
    parts.p = await createPartner(parts.t);
  });
  afterAll(async () => {
    await parts.t?.close();
    await parts.rx?.close();
  });
  const part = <K extends keyof E2e>(k: K): E2e[K] => {
    if (!parts[k]) throw new Error(`the harness's ${k} is read before its beforeAll ran`);
    return parts[k]!;
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
