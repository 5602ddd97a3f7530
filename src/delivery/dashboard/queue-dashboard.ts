import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import type { BoardHooks, HookContext, JobCounts, JobStatus, QueueJob, Status } from '@bull-board/api/typings/app';
import type { Job, Queue } from 'bullmq';
import type { Actor } from '../../operators/index.js';
import type { DashboardJobFacts } from './dashboard-writes.js';
import { attemptLog, DashboardRow, dashboardJobJson, dashboardState, jobKind } from './dashboard-job.js';
import { CircuitView, circuitsDescription, dashboardRefusal, SWITCHED_OFF } from './dashboard-policy.js';
import { DASHBOARD_COUNT_CAP, DASHBOARD_TABS, DashboardStore, DashboardTab } from '../../callbacks/index.js';

export const DASHBOARD_PATH = '/admin/queues';

/**
 * What the dashboard's live actions mean for a callback. Each changes PostgreSQL (the record of
 * truth) and wakes delivery; the dashboard then shows the row's new state. Also where it reads
 * the destinations' circuits.
 */
export interface DashboardActions {
  /** Retry on a failed job: redeliver the callback (same webhook-id, fresh schedule). */
  redeliver(actor: Actor, callbackId: string): Promise<void>;
  /** Retry all on the Failed tab: redeliver every failed callback; how many were. */
  redeliverFailed(actor: Actor): Promise<number>;
  /** Promote on a delayed job: make its next attempt due now. */
  promote(actor: Actor, callbackId: string): Promise<void>;
  /** Promote all, a page at a time: make the callbacks' next attempt due now. */
  promotePage(actor: Actor, callbackIds: string[]): Promise<void>;
  /** Every destination with its circuit state (for the queue's description). */
  destinations(): Promise<CircuitView[]>;
}

const DESCRIPTION = 'Callback deliveries as PostgreSQL records them: job id = callback id = webhook-id.';
/** The description (open circuits) is refreshed at most this often, on the dashboard's polls. */
const CIRCUITS_REFRESH_MS = 2000;
/** Promote all makes this many delayed callbacks due per statement. */
const PROMOTE_PAGE = 1000;
/** bull-board's counts cover every status it knows; these have no callback in them. */
const NO_JOBS: JobCounts = {
  latest: 0,
  active: 0,
  waiting: 0,
  'waiting-children': 0,
  prioritized: 0,
  completed: 0,
  failed: 0,
  delayed: 0,
  paused: 0,
};

const isTab = (s: string): s is DashboardTab => (DASHBOARD_TABS as string[]).includes(s);

/**
 * bull-board's BullMQ adapter reading PostgreSQL: every tab, count, job and log is a callback row
 * (dashboard-store.ts, dashboard-job.ts), so a dead letter is a failed job whether or not a job
 * ever existed, and "will run at" is next_attempt_at. The BullMQ queue is still behind it for
 * what only Redis knows (memory, workers, paused). Retry and Promote go through the database
 * ({@link DashboardActions}); every other write bull-board knows is refused here as a second line
 * behind the request policy ({@link dashboardRefusal}).
 */
export class CallbackQueueAdapter extends BullMQAdapter {
  constructor(
    queue: Queue,
    private readonly store: DashboardStore,
    private readonly actions: DashboardActions,
  ) {
    // Not read-only (Retry and Promote stay), no retry of completed jobs (a completed job is a
    // delivered callback; the operator API redelivers those).
    super(queue, {
      readOnlyMode: false,
      allowRetries: true,
      allowCompletedRetries: false,
      description: DESCRIPTION,
    } as never);
  }

  private circuits = '';
  private circuitsAt = 0;
  /** Tabs whose last count reached the cap. */
  private capped: DashboardTab[] = [];

  override getDescription(): string {
    const capped = this.capped.length
      ? ` Counts stop at ${DASHBOARD_COUNT_CAP}: ${this.capped.join(', ')} hold at least that many.`
      : '';
    return `${DESCRIPTION}${capped}${this.circuits ? ` ${this.circuits}` : ''}`;
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

  override getStatuses(): Status[] {
    return ['latest', ...DASHBOARD_TABS];
  }

  override getJobStatuses(): JobStatus[] {
    return [...DASHBOARD_TABS];
  }

  override async getJobCounts(): Promise<JobCounts> {
    const counts = await this.store.counts();
    this.capped = DASHBOARD_TABS.filter((t) => counts[t] >= DASHBOARD_COUNT_CAP);
    return { ...NO_JOBS, ...counts };
  }

  override async getJob(id: string): Promise<Job | undefined> {
    const read = await this.store.job(id);
    return read && (this.view(read.row, read.now) as unknown as Job);
  }

  /** One tab's page; for "latest", the first page of every tab, newest first. */
  override async getJobs(statuses: JobStatus[], start = 0, end = 9): Promise<Job[]> {
    const pages = await Promise.all(statuses.filter(isTab).map((t) => this.store.page(t, start, end)));
    const jobs = pages.flatMap((p) => p.rows.map((r) => this.view(r, p.now)));
    if (pages.length > 1) jobs.sort((a, b) => b.toJSON().timestamp - a.toJSON().timestamp);
    return jobs as unknown as Job[];
  }

  override async getJobLogs(id: string): Promise<string[]> {
    const log = await this.store.log(id);
    return log ? attemptLog(log.row, log.attempts, log.now) : [];
  }

  /** Which tab a job is on now and what it delivers (for the request policy); undefined when there is none. */
  async jobFacts(id: string): Promise<DashboardJobFacts | undefined> {
    const read = await this.store.job(id);
    return read && { state: dashboardState(read.row, read.now), kind: jobKind(read.row) };
  }

  /** Promote all: every delayed callback due now, a page at a time (each page leaves the tab, with its audit entry). */
  async promoteAllAs(actor: Actor): Promise<void> {
    let previous = new Set<string>();
    for (;;) {
      const ids = await this.store.delayedIds(PROMOTE_PAGE);
      // A page that is still delayed after its promotion would be promoted for ever.
      if (ids.length === 0 || ids.some((id) => previous.has(id))) return;
      await this.actions.promotePage(actor, ids);
      if (ids.length < PROMOTE_PAGE) return;
      previous = new Set(ids);
    }
  }

  override getJobSchedulers(): Promise<[]> {
    return Promise.resolve([]);
  }
  override getJobSchedulersCount(): Promise<number> {
    return Promise.resolve(0);
  }

  /** Answered by the dashboard's own handler, with its operator (DASHBOARD_WRITES). */
  override promoteAll(): never {
    throw new Error(SWITCHED_OFF);
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

  /** A callback as bull-board's job: its row's fields, and only the actions above. */
  private view(row: DashboardRow, now: Date): QueueJob {
    const json = dashboardJobJson(row, now);
    const state = dashboardState(row, now);
    return {
      opts: json.opts as QueueJob['opts'], // bull-board types it `any`; dashboardJobJson made it
      getState: () => Promise.resolve(state),
      toJSON: () => json,
      // Retry and Promote are answered by the dashboard's own handlers, with their operator (DASHBOARD_WRITES).
      retry: () => Promise.reject(new Error(SWITCHED_OFF)),
      promote: () => Promise.reject(new Error(SWITCHED_OFF)),
      remove: () => Promise.reject(new Error(SWITCHED_OFF)),
    };
  }
}

/** bull-board routes acting on one job: the request policy needs the job's state. */
const JOB_ACTIONS = new Set(['/api/queues/:queueName/:jobId/retry', '/api/queues/:queueName/:jobId/promote']);

/**
 * Refuses, before bull-board runs them, the requests of actions that would bypass PostgreSQL;
 * refreshes the open circuits shown in the queue's description when the queues are polled.
 */
export const dashboardHooks = (adapter: CallbackQueueAdapter): BoardHooks => ({
  before: async (ctx: HookContext) => {
    if (ctx.route === '/api/queues') await adapter.refreshCircuits();
    const job = JOB_ACTIONS.has(ctx.route) ? await adapter.jobFacts(String(ctx.request.params.jobId)) : undefined;
    const facts = { jobState: job?.state, jobKind: job?.kind };
    const refused = dashboardRefusal(ctx.method, ctx.route, { ...ctx.request.params, ...facts });
    if (refused === null) return { allow: true };
    return { allow: false, status: 405, errorKey: 'ERRORS.QUEUE_READ_ONLY', message: refused };
  },
});
