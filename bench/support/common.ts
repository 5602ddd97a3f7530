// What every bench program shares: where the servers are, how it reads its variables, how it
// formats figures and waits (every wait bounded).
import http from 'node:http';
import { AddressInfo } from 'node:net';
import got, { Got } from 'got';

/** A positive integer from the environment, or `fallback` when unset; anything else ends the run. */
export function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1)
    throw new Error(`bench: ${name} must be a positive integer, got "${raw}"`);
  return Number(raw);
}

export const BASE_DB = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const ADMIN = 'bench-admin-token-0123456789';
export const adminHeaders = { authorization: `Bearer ${ADMIN}` };
/** The default bound of a wait for deliveries. */
export const DEADLINE_MS = 180_000;

export const quantile = (sorted: number[], q: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : NaN;
export const fmt = (n: number, digits = 1) =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: digits }) : 'n/a';
export const mb = (bytes: number) => `${fmt(bytes / 1024 / 1024)} MB`;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A figure for the results file: a number, or null where it was not measured. */
export const figure = (n: number) => (Number.isFinite(n) ? Math.round(n * 100) / 100 : null);

export async function until(
  fn: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = DEADLINE_MS,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** Runs `total` tasks with at most `width` in flight. */
export async function pool(total: number, width: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < total) await task(next++);
    }),
  );
}

export async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/** The service's API on `port`: keep-alive, no retries (a failure is a finding). */
export function apiClient(port: number): Got {
  return got.extend({
    prefixUrl: `http://127.0.0.1:${port}`,
    agent: { http: new http.Agent({ keepAlive: true, maxSockets: 128 }) },
    retry: { limit: 0 },
  });
}
