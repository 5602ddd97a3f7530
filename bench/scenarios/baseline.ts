// The baseline (always runs first): a bare got POST loop, 64 in flight, to the receiver the
// scenarios deliver to. Every rate is compared with it: this machine's speed swings by a third
// from hour to hour.
import http from 'node:http';
import got from 'got';
import { pool } from '../support/common.js';
import { BODY } from './context.js';

const BASELINE_REQUESTS = 20_000;

/** Requests per second of the loop to `target(path)`. */
export async function baselineScenario(target: (p: string) => string): Promise<number> {
  const agent = { http: new http.Agent({ keepAlive: true, maxSockets: 64 }) };
  try {
    const t0 = performance.now();
    await pool(BASELINE_REQUESTS, 64, async (i) => {
      await got.post(target(`/baseline/${i}`), { body: BODY, headers: { 'content-type': 'application/json' }, agent, retry: { limit: 0 }, followRedirect: false });
    });
    return BASELINE_REQUESTS / ((performance.now() - t0) / 1000);
  } finally {
    agent.http.destroy();
  }
}
