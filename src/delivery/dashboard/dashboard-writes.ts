import { codeOfStatus } from '../../platform/index.js';
import type { Actor, OperatorIdentity } from '../../operators/index.js';
import { CALLBACK_QUEUE } from '../callback-queue.js';
import type { DashboardJobKind } from './dashboard-job.js';
import { dashboardRefusal } from './dashboard-policy.js';

/** An answer of the dashboard's own handlers, in bull-board's shapes. */
export interface DashboardAnswer {
  status: number;
  body: object;
}

const refusal = (status: 404 | 405, error: string, message: string): DashboardAnswer => ({
  status,
  body: { statusCode: status, error, message, code: codeOfStatus(status) },
});

/** A job as the request policy needs it: its tab now and what it delivers. */
export interface DashboardJobFacts {
  state: string;
  kind: DashboardJobKind;
}

/** What the dashboard's writes do, each with the operator as its actor (its audit entry). */
export interface DashboardWriteActions {
  /** Which tab a job is on now and what it delivers; undefined when there is none. */
  job(id: string): Promise<DashboardJobFacts | undefined>;
  redeliver(actor: Actor, callbackId: string): Promise<void>;
  redeliverFailed(actor: Actor): Promise<number>;
  promote(actor: Actor, callbackId: string): Promise<void>;
  /** Promote all: every delayed callback, a page at a time. */
  promoteAll(actor: Actor): Promise<void>;
}

/** A write route of the dashboard, as bull-board's UI calls it, answered here instead of by bull-board. */
export interface DashboardWrite {
  /** Under the dashboard's path; the queue is named, so bull-board's routes for other names still answer theirs. */
  path: string;
  run(
    actions: DashboardWriteActions,
    operator: OperatorIdentity,
    params: Record<string, string>,
  ): Promise<DashboardAnswer>;
}

const actor = (operator: OperatorIdentity, action: string): Actor => ({ operator, action });
const done = (status: number): DashboardAnswer => ({ status, body: {} });

/** A single-job action (bull-board's `route`), done only on a job the request policy allows it on. */
async function onJob(
  actions: DashboardWriteActions,
  route: string,
  id: string,
  then: () => Promise<DashboardAnswer>,
): Promise<DashboardAnswer> {
  const job = await actions.job(id);
  if (job === undefined) return refusal(404, 'Not Found', `Job ${id} not found`);
  const refused = dashboardRefusal('put', route, { jobState: job.state, jobKind: job.kind });
  return refused === null ? then() : refusal(405, 'Method Not Allowed', refused);
}

/**
 * The dashboard's four writes (Retry and Promote, one job or all): answered here, with the
 * operator who pressed the button, because each changes PostgreSQL and writes an audit entry in
 * the same transaction. Every other write bull-board knows is refused before it runs
 * (dashboardHooks).
 */
export const DASHBOARD_WRITES: DashboardWrite[] = [
  {
    path: `/api/queues/${CALLBACK_QUEUE}/:jobId/retry`,
    run: (a, op, p) =>
      onJob(a, '/api/queues/:queueName/:jobId/retry', p.jobId, async () => {
        await a.redeliver(actor(op, 'callback.redeliver'), p.jobId);
        return done(204);
      }),
  },
  {
    path: `/api/queues/${CALLBACK_QUEUE}/:jobId/promote`,
    run: (a, op, p) =>
      onJob(a, '/api/queues/:queueName/:jobId/promote', p.jobId, async () => {
        await a.promote(actor(op, 'callback.promote'), p.jobId);
        return done(204);
      }),
  },
  {
    // One statement, not bull-board's page-by-page retry of jobs (which stops at the capped count).
    path: `/api/queues/${CALLBACK_QUEUE}/retry/failed`,
    run: async (a, op) => ({
      status: 200,
      body: { retried: await a.redeliverFailed(actor(op, 'callback.redeliver-failed')), skipped: 0 },
    }),
  },
  {
    path: `/api/queues/${CALLBACK_QUEUE}/promote`,
    run: async (a, op) => {
      await a.promoteAll(actor(op, 'callback.promote'));
      return done(200);
    },
  },
];
