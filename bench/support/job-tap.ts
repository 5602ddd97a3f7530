// BENCH_DUMP's view of the delivery queue, with no work added to the service: BullMQ writes an
// event (a Redis stream entry, its id the Redis clock in ms) when a job is added, taken by a
// worker and completed. The tap reads that stream as it grows and, when a job is added, its
// data (callback ids and lease) before the job completes and is removed.
import { LEASE_MARGIN_MS } from '../../src/delivery/admission.js';
import { CALLBACK_QUEUE } from '../../src/delivery/callback-queue.js';
import { createRedis, redisNamespace, RedisConnection } from '../../src/platform/database/redis.js';

/** One job's times, epoch ms: admitted is its ADMIT statement's now() (lease_until − the lease). */
export interface JobTimes {
  admitted?: number;
  added?: number;
  active?: number;
  completed?: number;
}

/** The lease admission gives (admission.ts): the attempt's timeout, as the service was given it, and the margin. */
const LEASE_MS = Number(process.env.CALLBACK_TIMEOUT_MS ?? 15_000) + LEASE_MARGIN_MS;

export class JobTap {
  private readonly redis: RedisConnection;
  private readonly stream: string;
  private readonly jobs = new Map<string, JobTimes>();
  /** Each callback's job. */
  private readonly byCallback = new Map<string, JobTimes>();
  private stopped = false;
  private loop: Promise<void> | null = null;
  private lastId = '$';

  constructor(
    redisUrl: string,
    private readonly prefix: string,
  ) {
    this.redis = createRedis(redisUrl, 'bench-job-tap');
    this.stream = `${redisNamespace(prefix)}:${CALLBACK_QUEUE}:events`;
  }

  /** Reads from the stream's end on: start it before the jobs to watch are added. */
  async start(): Promise<void> {
    const last = (await this.redis.xrevrange(this.stream, '+', '-', 'COUNT', 1)) as [string, string[]][];
    this.lastId = last.length ? last[0][0] : '0';
    this.loop = this.read();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    this.redis.disconnect();
  }

  /** The times of the job that carried this callback, if the tap saw it. */
  of(callbackId: string): JobTimes | undefined {
    return this.byCallback.get(callbackId);
  }

  private job(id: string): JobTimes {
    let j = this.jobs.get(id);
    if (!j) this.jobs.set(id, (j = {}));
    return j;
  }

  private async read(): Promise<void> {
    while (!this.stopped) {
      const res = await this.redis.xread('COUNT', 1000, 'BLOCK', 100, 'STREAMS', this.stream, this.lastId);
      if (!res) continue;
      const added: string[] = [];
      for (const [id, fields] of res[0][1]) {
        this.lastId = id;
        const at = Number(id.slice(0, id.indexOf('-')));
        const f = new Map<string, string>();
        for (let i = 0; i < fields.length; i += 2) f.set(fields[i], fields[i + 1]);
        const jobId = f.get('jobId');
        if (!jobId) continue;
        const event = f.get('event');
        if (event === 'added') {
          this.job(jobId).added = at;
          added.push(jobId);
        } else if (event === 'active') this.job(jobId).active = at;
        else if (event === 'completed') this.job(jobId).completed = at;
      }
      if (added.length === 0) continue;
      const datas = await Promise.all(
        added.map((jobId) => this.redis.hget(`${redisNamespace(this.prefix)}:${CALLBACK_QUEUE}:${jobId}`, 'data')),
      );
      added.forEach((jobId, i) => {
        const data = datas[i];
        if (!data) return; // completed and removed before the tap read it
        const { callbackIds, lease } = JSON.parse(data) as { callbackIds: string[]; lease: string };
        const j = this.job(jobId);
        j.admitted = Number(lease) / 1000 - LEASE_MS;
        for (const c of callbackIds) this.byCallback.set(c, j);
      });
    }
  }
}
