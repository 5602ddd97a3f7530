import { Redis, RedisOptions } from 'ioredis';

export const REDIS = Symbol('REDIS');

/**
 * BullMQ workers need maxRetriesPerRequest: null (blocking commands). Producers pass
 * `failFast` so a command fails at once while Redis is unreachable instead of waiting in
 * ioredis' offline queue: the relay then rolls back and tries again later.
 */
export function createRedis(url: string, name: string, failFast = false): Redis {
  const options: RedisOptions = failFast
    ? { connectionName: name, enableOfflineQueue: false, maxRetriesPerRequest: 1 }
    : { connectionName: name, maxRetriesPerRequest: null };
  const redis = new Redis(url, options);
  redis.on('error', () => undefined); // reconnects by itself; callers see failures on their commands
  return redis;
}

/**
 * Every key of one deployment (BullMQ's and our own) starts with `{QUEUE_PREFIX}`: the braces
 * are a Redis Cluster hash tag, so all of them live in one slot, as BullMQ's Lua scripts and
 * ours (which touch several keys at once) require on a cluster. On a single Redis they are
 * just part of the name.
 */
export function redisNamespace(queuePrefix: string): string {
  return `{${queuePrefix}}`;
}

/** Deletes every key of a deployment's namespace (see redisNamespace): what a run leaves in a shared Redis. */
export async function deletePrefixKeys(redis: Redis, queuePrefix: string): Promise<void> {
  // MATCH is a glob: escape its special characters ('{' and '}' are literal there).
  const pattern = `${redisNamespace(queuePrefix).replace(/[*?[\]\\]/g, '\\$&')}:*`;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    if (keys.length) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}
