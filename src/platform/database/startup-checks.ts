import { isCluster, pingNamespace, redisSeeds, withRedisOnce } from './redis.js';

/**
 * What start-up asks Redis before the service is built. Whatever they answer, the
 * process either waits, saying what for, or fails naming the cause: a supervisor reads a silent
 * exit 0 as a deliberate stop and does not restart the service.
 */

/** How often a wait for a Redis loading its dataset is logged again. */
const LOADING_LOG_MS = 10_000;
const LOADING_RETRY_MS = 1_000;

/**
 * Redis (or every seed of a Redis Cluster) must answer for the deployment's keys as a writable
 * master: a replica, a wrong password, a cluster without its slots or in `CLUSTERDOWN` fail
 * start-up naming the cause (ioredis would otherwise retry forever, silently). A Redis loading its
 * dataset into memory (`LOADING`) is waited for: it answers once loaded.
 */
export async function checkRedis(url: string, queuePrefix: string, waiting: (message: string) => void): Promise<void> {
  const seeds = redisSeeds(url);
  const where = `Redis${seeds.length > 1 ? ' Cluster' : ''} at ${seeds.map((s) => new URL(s).host).join(',')}`;
  let lastLog = 0;
  for (;;) {
    try {
      await withRedisOnce(url, async (redis) => {
        if (!isCluster(redis) && (await redis.role())[0] === 'slave')
          throw new Error('it is a replica (read-only): REDIS_URL must name the master');
        // The node holding this deployment's keys, as readiness asks it (CLUSTERDOWN on a cluster
        // not serving its slot).
        await pingNamespace(redis, queuePrefix);
      });
      return;
    } catch (e) {
      const message = (e as Error).message;
      if (!/^LOADING\b/.test(message))
        throw new Error(
          `${where} cannot serve this service: ${message}${seeds.length > 1 ? await describeSeeds(seeds) : ''}`,
          { cause: e },
        );
      if (Date.now() - lastLog >= LOADING_LOG_MS) {
        waiting(`waiting for ${where}: it is loading its dataset into memory (${message})`);
        lastLog = Date.now();
      }
      await new Promise((r) => setTimeout(r, LOADING_RETRY_MS));
    }
  }
}

/**
 * Each seed of a cluster on its own: what its CLUSTER INFO says, or why it does not answer
 * (a seed found later carries the first seed's credentials, as the cluster connection does).
 */
async function describeSeeds(seeds: string[]): Promise<string> {
  const first = new URL(seeds[0]);
  const said = await Promise.all(
    seeds.map(async (seed) => {
      const u = new URL(seed);
      if (!u.password && first.password) [u.username, u.password] = [first.username, first.password];
      const info = await withRedisOnce(u.toString(), (r) => r.call('CLUSTER', 'INFO') as Promise<string>).catch(
        (e: Error) => e,
      );
      if (info instanceof Error) return `${u.host}: ${info.message}`;
      const field = (name: string) => new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1] ?? '?';
      return (
        `${u.host}: cluster_state:${field('cluster_state')}, ` +
        `${field('cluster_slots_assigned')} of 16384 slots assigned`
      );
    }),
  );
  return ` (${said.join('; ')})`;
}
