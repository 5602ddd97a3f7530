import { Cluster, ClusterOptions, Redis, RedisOptions } from 'ioredis';

export const REDIS = Symbol('REDIS');

/**
 * A single Redis or a Redis Cluster (REDIS_URL naming several seed nodes). The commands used
 * here, BullMQ's and the Lua scripts over one deployment's keys work on both, because every key
 * of a deployment sits in one hash slot (see redisNamespace).
 */
export type RedisConnection = Redis | Cluster;

/** REDIS_URL's seed nodes: one is a single Redis, several name a Redis Cluster. */
export function redisSeeds(url: string): string[] {
  return url
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export function isCluster(redis: RedisConnection): redis is Cluster {
  return redis instanceof Cluster;
}

/**
 * `options` are one node's connection options; on a cluster they apply to every node, and
 * `cluster` holds the cluster-level ones. Nodes a cluster discovers (CLUSTER SLOTS) get only
 * redisOptions, not a seed URL's credentials or TLS: those are carried over from the first seed.
 */
function connect(url: string, options: RedisOptions, cluster: ClusterOptions = {}): RedisConnection {
  const seeds = redisSeeds(url);
  if (seeds.length === 1) return new Redis(seeds[0], options);
  const first = new URL(seeds[0]);
  const shared: RedisOptions = {};
  if (first.username) shared.username = decodeURIComponent(first.username);
  if (first.password) shared.password = decodeURIComponent(first.password);
  if (first.protocol === 'rediss:') shared.tls = {};
  const nodes = seeds.map((s) => {
    const u = new URL(s);
    return { host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(u.port || 6379) };
  });
  return new Cluster(nodes, { ...cluster, redisOptions: { ...shared, ...options } });
}

/** How a connection's commands behave while Redis is unreachable. */
export type RedisPatience = Pick<RedisOptions, 'maxRetriesPerRequest' | 'enableOfflineQueue'>;

/** Commands wait in ioredis' offline queue until Redis is back: BullMQ workers need this (blocking commands). */
export const WAIT_FOR_REDIS: RedisPatience = { maxRetriesPerRequest: null, enableOfflineQueue: true };

/**
 * Commands fail at once while Redis is unreachable, for producers that hand the work back and try
 * again later (the relay releases what it admitted). On a cluster the offline queue turned off is
 * the cluster's own; each node connection keeps its own, since a cluster opens node connections
 * lazily with a command waiting.
 */
export const FAIL_FAST: RedisPatience = { maxRetriesPerRequest: 1, enableOfflineQueue: false };

/** A named connection, without an ioredis keyPrefix (BullMQ refuses it; our namespace is BullMQ's `prefix`). */
export function createRedis(url: string, name: string, patience: RedisPatience = WAIT_FOR_REDIS): RedisConnection {
  const { enableOfflineQueue, ...retries } = patience;
  const node: RedisOptions = { connectionName: name, ...retries };
  const redis =
    redisSeeds(url).length > 1
      ? connect(url, node, { enableOfflineQueue })
      : connect(url, { ...node, enableOfflineQueue });
  redis.on('error', () => undefined); // reconnects by itself; callers see failures on their commands
  return redis;
}

/**
 * Connects once, without reconnecting, runs `fn` and disconnects: for the start-up check and
 * clean-ups, where an unreachable Redis must be an error rather than an endless retry. No ready
 * check on the node connections: a Redis loading its dataset answers `LOADING` to `fn`'s
 * commands instead of being waited for silently.
 *
 * ioredis' connect() never settles when a cluster's ready check fails (`cluster_state:fail`: no
 * slots assigned, a master down) and it may not reconnect: the connection only ends. With no
 * other handle left, Node then exited 0 mid-start-up without a line. So the end of the
 * connection fails the call too, and a closed connection is reported by the error that closed
 * it (`WRONGPASS`, `NOAUTH`, `ECONNREFUSED`), not as "Connection is closed.".
 */
export async function withRedisOnce<T>(url: string, fn: (redis: RedisConnection) => Promise<T>): Promise<T> {
  const node: RedisOptions = {
    lazyConnect: true,
    connectTimeout: 5000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableReadyCheck: false,
  };
  const redis = connect(url, node, { lazyConnect: true, clusterRetryStrategy: () => null });
  let cause: Error | undefined;
  redis.on('error', (e: Error) => (cause = e));
  const why = (e: Error) => (cause && /Connection is closed/.test(e.message) ? cause : e);
  try {
    await new Promise<void>((resolve, reject) => {
      const ended = () =>
        reject(
          cause ?? new Error('the connection ended before Redis was ready (a Redis Cluster whose state is not ok?)'),
        );
      redis.once('end', ended);
      redis
        .connect()
        .then(resolve, (e: Error) => reject(why(e)))
        .finally(() => redis.off('end', ended));
    });
    return await fn(redis).catch((e: Error) => Promise.reject(why(e)));
  } finally {
    redis.disconnect();
  }
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

/**
 * Readiness: the node holding this deployment's keys answers. On a cluster a PING would go to
 * any node; a command on a key of the namespace goes to the one that matters.
 */
export async function pingNamespace(redis: RedisConnection, queuePrefix: string): Promise<void> {
  await redis.exists(redisNamespace(queuePrefix));
}

/** Deletes every key of a deployment's namespace (see redisNamespace): what a run leaves in a shared Redis. */
export async function deletePrefixKeys(redis: RedisConnection, queuePrefix: string): Promise<void> {
  // MATCH is a glob: escape its special characters ('{' and '}' are literal there).
  const pattern = `${redisNamespace(queuePrefix).replace(/[*?[\]\\]/g, '\\$&')}:*`;
  // SCAN reads one node; on a cluster the namespace's slot is on one master, so ask each.
  for (const node of isCluster(redis) ? redis.nodes('master') : [redis]) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      // One slot (the hash tag), so one multi-key DEL is allowed on a cluster too.
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  }
}
