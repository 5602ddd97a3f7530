import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { BoardHooks, HookContext, JobStatus, QueueJob, QueueJobJson } from '@bull-board/api/typings/app';
import { INestApplication } from '@nestjs/common';
import type { Job, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { NextFunction, Request, Response } from 'express';
import { AppConfig } from '../config/app-config.js';
import { isOperator } from '../partners/auth.guards.js';
import { CallbackQueue } from './callback-queue.js';
import { CircuitView, circuitsDescription, dashboardPage, dashboardRequestAllowed, SWITCHED_OFF } from './dashboard-policy.js';

export const DASHBOARD_PATH = '/admin/queues';

/**
 * What the dashboard's two live actions mean for a callback, with the database changed first
 * (it is the record of truth; Redis follows it), and where it reads the destinations' circuits.
 */
export interface DashboardActions {
  /** Retry on a failed job: redeliver the callback (same webhook-id, fresh schedule). */
  redeliver(callbackId: string): Promise<void>;
  /** Promote on a delayed job: make the callback's next attempt due now. */
  attemptNow(callbackIds: string[]): Promise<void>;
  /** Every destination with its circuit state (for the queue's description). */
  destinations(): Promise<CircuitView[]>;
}

const DESCRIPTION = 'Callback deliveries: job id = callback id = webhook-id.';
/** The description (open circuits) is refreshed at most this often, on the dashboard's polls. */
const CIRCUITS_REFRESH_MS = 2000;

/**
 * bull-board's BullMQ adapter with the callbacks' semantics: Retry and Promote go through the
 * database ({@link DashboardActions}); every other write bull-board knows is refused here as a
 * second line behind the request policy ({@link dashboardRequestAllowed}); the "will run at" of
 * a delayed job is its real place in Redis's delayed set (the worker puts it at the callback's
 * `nextAttemptAt`), not bull-board's `timestamp + delay`, which BullMQ's moveToDelayed skews.
 */
export class CallbackQueueAdapter extends BullMQAdapter {
  constructor(
    private readonly bull: Queue,
    private readonly actions: DashboardActions,
  ) {
    // Not read-only (Retry and Promote stay), no retry of completed jobs (a completed job is a
    // delivered callback; the operator API redelivers those).
    super(bull, { readOnlyMode: false, allowRetries: true, allowCompletedRetries: false, description: DESCRIPTION } as never);
  }

  private circuits = '';
  private circuitsAt = 0;

  override getDescription(): string {
    return this.circuits ? `${DESCRIPTION} ${this.circuits}` : DESCRIPTION;
  }

  /** Reads the destinations' circuits again unless it was done within the last moments. */
  async refreshCircuits(): Promise<void> {
    if (Date.now() - this.circuitsAt < CIRCUITS_REFRESH_MS) return;
    this.circuitsAt = Date.now();
    try {
      this.circuits = circuitsDescription(await this.actions.destinations());
    } catch (e) {
      this.circuits = `Destination states unavailable: ${(e as Error).message}`;
    }
  }

  override async getJob(id: string): Promise<Job | undefined> {
    const job = await this.bull.getJob(id);
    if (!job) return undefined;
    const [view] = await this.views([job]);
    return view as unknown as Job;
  }

  override async getJobs(statuses: JobStatus[], start?: number, end?: number): Promise<Job[]> {
    const jobs = await super.getJobs(statuses, start, end);
    return (await this.views(jobs)) as unknown as Job[];
  }

  /** Promote all: every delayed callback due now in the database, then in Redis. */
  override async promoteAll(): Promise<void> {
    for (let start = 0; ; start += 1000) {
      const ids = (await this.bull.getDelayed(start, start + 999)).filter(Boolean).map((j) => j.id!);
      if (ids.length === 0) break;
      await this.actions.attemptNow(ids);
      if (ids.length < 1000) break;
    }
    await this.bull.promoteJobs();
  }

  override addJob(): never {
    throw new Error(SWITCHED_OFF);
  }
  override clean(): never {
    throw new Error(SWITCHED_OFF);
  }
  override empty(): never {
    throw new Error(SWITCHED_OFF);
  }
  override obliterate(): never {
    throw new Error(SWITCHED_OFF);
  }
  override pause(): never {
    throw new Error(SWITCHED_OFF);
  }
  override resume(): never {
    throw new Error(SWITCHED_OFF);
  }
  override setGlobalConcurrency(): never {
    throw new Error(SWITCHED_OFF);
  }
  override setConfiguredRateLimit(): never {
    throw new Error(SWITCHED_OFF);
  }
  override removeConfiguredRateLimit(): never {
    throw new Error(SWITCHED_OFF);
  }
  override releaseActiveRateLimit(): never {
    throw new Error(SWITCHED_OFF);
  }
  override removeJobScheduler(): never {
    throw new Error(SWITCHED_OFF);
  }
  override updateJobScheduler(): never {
    throw new Error(SWITCHED_OFF);
  }
  override runJobSchedulerNow(): never {
    throw new Error(SWITCHED_OFF);
  }

  /** The jobs as bull-board sees them: only the actions above, true run times. */
  private async views(jobs: Job[]): Promise<QueueJob[]> {
    const runAt = await this.delayedRunTimes(jobs);
    return jobs.map((job) => {
      const id = job.id!;
      const view: QueueJob = {
        opts: job.opts,
        repeatJobKey: job.repeatJobKey,
        getState: () => job.getState(),
        toJSON: (): QueueJobJson => {
          const json = job.toJSON() as unknown as QueueJobJson;
          const at = runAt.get(id);
          if (at === undefined) return json;
          // bull-board shows timestamp + (opts.delay || delay) as "will run at".
          const delay = Math.max(0, at - json.timestamp);
          return { ...json, delay, opts: { ...json.opts, delay } };
        },
        retry: async (state) => {
          if (state !== 'failed') throw new Error('Only a failed callback is retried here (a redelivery); the operator API redelivers the others');
          await this.actions.redeliver(id);
        },
        promote: async () => {
          await this.actions.attemptNow([id]);
          await job.promote();
        },
        remove: () => Promise.reject(new Error(SWITCHED_OFF)),
      };
      return view;
    });
  }

  /** When Redis will hand each delayed job out: its score in the delayed set (ms × 4096 + a tie-breaker). */
  private async delayedRunTimes(jobs: Job[]): Promise<Map<string, number>> {
    const runAt = new Map<string, number>();
    if (jobs.length === 0) return runAt;
    const client = (await this.getClient()) as unknown as Redis;
    const scores = await Promise.all(jobs.map((j) => client.zscore(this.bull.keys.delayed, j.id!)));
    jobs.forEach((j, i) => {
      if (scores[i] !== null) runAt.set(j.id!, Math.floor(Number(scores[i]) / 0x1000));
    });
    return runAt;
  }
}

/**
 * Refuses, before bull-board runs them, the requests of actions that would bypass PostgreSQL;
 * refreshes the open circuits shown in the queue's description when the queues are polled.
 */
export const dashboardHooks = (queue: Queue, adapter?: CallbackQueueAdapter): BoardHooks => ({
  before: async (ctx: HookContext) => {
    if (ctx.route === '/api/queues' && adapter) await adapter.refreshCircuits();
    const state = ctx.route === '/api/queues/:queueName/:jobId/retry' ? await queue.getJobState(String(ctx.request.params.jobId)) : undefined;
    if (dashboardRequestAllowed(ctx.method, ctx.route, { ...ctx.request.params, jobState: state })) return { allow: true };
    return { allow: false, status: 405, errorKey: 'ERRORS.QUEUE_READ_ONLY', message: SWITCHED_OFF };
  },
});

/** bull-board behind the operator credential; a browser gets the Basic prompt. */
export function mountQueueDashboard(app: INestApplication, config: AppConfig, actions: DashboardActions): void {
  const queue = app.get(CallbackQueue).queue;
  const adapter = new ExpressAdapter();
  adapter.setBasePath(DASHBOARD_PATH);
  const queueAdapter = new CallbackQueueAdapter(queue, actions);
  createBullBoard({
    queues: [queueAdapter],
    serverAdapter: adapter,
    options: {
      handlerHooks: dashboardHooks(queue, queueAdapter),
      uiConfig: { boardTitle: 'Callback deliveries', hideDocsLink: true, jobDetails: { defaultTab: 'Logs' } },
    },
  });
  const guard = (req: Request, res: Response, next: NextFunction) => {
    if (isOperator(req.headers.authorization, config.adminToken, true)) return next();
    res
      .status(401)
      .setHeader('WWW-Authenticate', 'Basic realm="funding-service", charset="UTF-8"')
      .json({ statusCode: 401, error: 'Unauthorized', message: 'Operator credentials are required (Bearer ADMIN_TOKEN, or Basic admin:ADMIN_TOKEN)' });
  };
  // The page itself: nothing from the internet, and no buttons for the switched-off actions.
  const page = (req: Request, res: Response, next: NextFunction) => {
    if (req.method === 'GET' && !req.path.startsWith('/api/') && !req.path.startsWith('/static/')) {
      const send = res.send.bind(res);
      res.send = (body?: unknown) => send(typeof body === 'string' ? dashboardPage(body) : body);
    }
    next();
  };
  app.use(DASHBOARD_PATH, guard, page, adapter.getRouter());
}
