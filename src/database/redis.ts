import { Redis } from 'ioredis';

export const REDIS = Symbol('REDIS');

/** BullMQ needs maxRetriesPerRequest: null on its connections. */
export function createRedis(url: string, name: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, connectionName: name, lazyConnect: false });
}
