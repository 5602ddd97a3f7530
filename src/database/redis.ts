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

/** Deletes every key of a BullMQ prefix (`prefix:*`): what a run leaves in a shared Redis. */
export async function deletePrefixKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    if (keys.length) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}
