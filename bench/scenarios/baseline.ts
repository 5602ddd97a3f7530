// The baseline (always runs first): a bare got POST loop, 64 in flight, to the receiver the
// scenarios deliver to. Every rate is compared with it: this machine's speed swings by a third
// from hour to hour. Its rate is the loop's in this process, beside the receiver; got's own CPU per
// request is the same loop's in a process of its own (bench/baseline-client.ts), where nothing but
// got's client runs.
import { execFile } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import got from 'got';
import { pool } from '../support/common.js';
import { BODY } from './context.js';

const BASELINE_REQUESTS = 20_000;
const CLIENT_REQUESTS = 10_000;
const CLIENT_DEADLINE_MS = 120_000;

export interface Baseline {
  /** Requests per second of the loop in this process. */
  rate: number;
  /** CPU µs (user + system, all its threads) per request of got's client alone, in a process of its own. */
  clientCpuUs: number;
}

/** `requests` POSTs with got, 64 in flight, to `url(i)`: the seconds they took and the CPU µs this process used meanwhile. */
export async function gotLoop(
  url: (i: number) => string,
  requests: number,
): Promise<{ seconds: number; cpuUs: number }> {
  const agent = { http: new http.Agent({ keepAlive: true, maxSockets: 64 }) };
  try {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await pool(requests, 64, async (i) => {
      await got.post(url(i), {
        body: BODY,
        headers: { 'content-type': 'application/json' },
        agent,
        retry: { limit: 0 },
        followRedirect: false,
      });
    });
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    return { seconds, cpuUs: cpu.user + cpu.system };
  } finally {
    agent.http.destroy();
  }
}

/** The loop's rate to `target(path)`, then got's client's CPU per request in a child process. */
export async function baselineScenario(target: (p: string) => string): Promise<Baseline> {
  const inProcess = await gotLoop((i) => target(`/baseline/${i}`), BASELINE_REQUESTS);
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [path.join(__dirname, '../baseline-client.js'), target('/baseline-client/'), String(CLIENT_REQUESTS)],
    {
      timeout: CLIENT_DEADLINE_MS,
    },
  );
  const client = JSON.parse(stdout) as { cpuUs: number };
  return { rate: BASELINE_REQUESTS / inProcess.seconds, clientCpuUs: client.cpuUs / CLIENT_REQUESTS };
}
