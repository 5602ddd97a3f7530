import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { deletePrefixKeys, withRedisOnce } from '../../src/platform/database/redis.js';

/** What a test run is: its database and queue prefix beside the base test database, and the admin token it starts with. */
export const ADMIN_TOKEN = 'test-admin-token-0123456789';
export const BASE_DB = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/funding_service_test';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

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
  await admin
    .query(`DROP DATABASE IF EXISTS "${new URL(c.databaseUrl).pathname.slice(1)}" WITH (FORCE)`)
    .catch(() => undefined);
  await admin.end();
}

/** Removes this run's BullMQ keys, so test runs leave nothing behind in the shared Redis. */
async function dropQueueKeys(url: string, prefix: string): Promise<void> {
  // A test that stopped its own Redis (or cluster) has nothing left to clean.
  await withRedisOnce(url, (redis) => deletePrefixKeys(redis, prefix)).catch(() => undefined);
}
