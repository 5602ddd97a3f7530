// What the bench reads about the processes and servers it measures: /proc (Linux; USER_HZ is 100
// there), Redis INFO, pg_stat_database.
import { readdirSync, readFileSync } from 'node:fs';
import { Client } from 'pg';
import { createRedis, isCluster, RedisConnection, withRedisOnce } from '../../src/platform/database/redis.js';
import { REDIS_URL } from './common.js';
import type { ServiceRun } from './service.js';

const CLK_TCK = 100;

function statusKb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN; // ended
  }
}

/** Peak resident set (VmHWM) of a process over its life, MB. */
export const peakRssMb = (pid: number): number => statusKb(pid, 'VmHWM') / 1024;

/** Resident set (VmRSS) of a process now, MB. */
export const rssMb = (pid: number): number => statusKb(pid, 'VmRSS') / 1024;

/** CPU seconds (user + system) a process has used so far. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/** Redis INFO memory used_memory, bytes (the sum over a cluster's masters). */
export async function usedMemory(redis: RedisConnection): Promise<number> {
  let total = 0;
  for (const node of isCluster(redis) ? redis.nodes('master') : [redis]) {
    total += Number(/^used_memory:(\d+)/m.exec(await node.info('memory'))?.[1] ?? NaN);
  }
  return total;
}

export interface CpuUsed {
  service: number;
  serviceSystem: number;
  redis: number;
  postgres: number;
  bench: number;
}

/**
 * CPU time (µs, user + system) used so far by the service processes, Redis, PostgreSQL and this
 * process (the driver and the receivers). The drain's figure per callback is the cost that
 * decides throughput on a machine whose cores are all busy, and varies far less from run to run
 * than the rate itself.
 */
export function cpuUsed(servicePids: number[]): CpuUsed {
  const used = { service: 0, serviceSystem: 0, redis: 0, postgres: 0, bench: 0 };
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const us = ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLK_TCK;
    if (servicePids.includes(Number(pid))) {
      used.service += us;
      used.serviceSystem += (Number(fields[12]) * 1e6) / CLK_TCK;
    } else if (Number(pid) === process.pid) used.bench += us;
    else if (comm === 'redis-server') used.redis += us;
    else if (comm === 'postgres') used.postgres += us;
  }
  return used;
}

/**
 * Statements run in the run's database (every statement outside a transaction is one) and
 * commands Redis processed (all of its clients), so far.
 */
export async function roundTrips(pg: Client): Promise<{ postgres: number; redis: number }> {
  const { rows } = await pg.query<{ n: string }>(
    `SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()`,
  );
  const commands = await withRedisOnce(REDIS_URL, async (redis) => {
    let n = 0;
    for (const node of isCluster(redis) ? redis.nodes('master') : [redis])
      n += Number(/^total_commands_processed:(\d+)/m.exec(await node.info('stats'))?.[1] ?? NaN);
    return n;
  });
  return { postgres: Number(rows[0].n), redis: commands };
}

/** Redis used_memory and the service's RSS, sampled each second (and on demand). */
export function memorySampler(run: ServiceRun) {
  const redis = createRedis(REDIS_URL, 'bench-sampler');
  const rssPeak = new Map<number, number>();
  let redisPeak = 0;
  let sampling = false;
  let timer: NodeJS.Timeout | undefined;
  const sample = async () => {
    if (sampling) return;
    sampling = true;
    try {
      redisPeak = Math.max(redisPeak, await usedMemory(redis));
    } catch {
      // a missed sample; the next one counts
    } finally {
      sampling = false;
    }
    for (const pid of run.pids()) rssPeak.set(pid, Math.max(rssPeak.get(pid) ?? 0, rssMb(pid) || 0));
  };
  return {
    redisNow: () => usedMemory(redis),
    redisPeak: () => redisPeak,
    rssPeak: (pid: number) => rssPeak.get(pid) ?? NaN,
    sample,
    start: (before: number) => ((redisPeak = before), (timer = setInterval(() => void sample(), 1000))),
    stop: () => {
      if (timer) clearInterval(timer);
      redis.disconnect();
    },
  };
}
