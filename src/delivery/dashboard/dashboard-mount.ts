import { createBullBoard } from '@bull-board/api';
import { FastifyAdapter as BullBoardFastifyAdapter } from '@bull-board/fastify';
import helmet from '@fastify/helmet';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BulkReplay, CallbackRepairs, DashboardStore, Redelivery } from '../../callbacks/index.js';
import type { MountAccess, OperatorIdentity } from '../../operators/index.js';
import { DomainError, sendDomainError, UnexpectedErrorAnswer } from '../../platform/index.js';
import { CallbackQueue } from '../callback-queue.js';
import { DestinationsService } from '../destinations/destinations.service.js';
import { DASHBOARD_HEADERS, dashboardPage } from './dashboard-policy.js';
import { DASHBOARD_WRITES, DashboardWriteActions } from './dashboard-writes.js';
import { CallbackQueueAdapter, DASHBOARD_PATH, DashboardActions, dashboardHooks } from './queue-dashboard.js';

/**
 * Who may use the dashboard, declared for every route mounted under it (bull-board's page, assets
 * and API, and its four writes below): an operator's Bearer token or HTTP Basic `<name>:<token>`
 * (a browser is asked for it); reads need `viewer`, every write `operator`, and a write from
 * another site is refused whatever credential the browser remembered (src/operators/access/access-gate.ts).
 */
export const DASHBOARD_ACCESS: MountAccess = {
  prefix: DASHBOARD_PATH,
  access: (method) => ({ to: 'browser-operator', role: method === 'GET' || method === 'HEAD' ? 'viewer' : 'operator' }),
};

type OperatorRequest = FastifyRequest & { operator?: OperatorIdentity };

/**
 * The queue dashboard (bull-board) mounted under {@link DASHBOARD_PATH} as the module starts,
 * behind the operator credential and role ({@link DASHBOARD_ACCESS}; a browser gets the Basic
 * prompt): its reads are the callback rows, its writes the callbacks module's repairs.
 */
@Injectable()
export class QueueDashboard implements OnModuleInit {
  constructor(
    private readonly host: HttpAdapterHost,
    private readonly store: DashboardStore,
    private readonly queue: CallbackQueue,
    private readonly redelivery: Redelivery,
    private readonly replay: BulkReplay,
    private readonly repairs: CallbackRepairs,
    private readonly destinations: DestinationsService,
  ) {}

  onModuleInit(): void {
    const actions: DashboardActions = {
      redeliver: (actor, id) => this.redelivery.redeliver(id, { actor }),
      redeliverFailed: (actor) => this.replay.replayAsOperator(actor, {}),
      promote: (actor, id) => this.repairs.promote(actor, id),
      promotePage: (actor, ids) => this.repairs.promotePage(actor, ids),
      destinations: () => this.destinations.list({}),
    };
    const instance: FastifyInstance = this.host.httpAdapter.getInstance();
    mount(instance, new CallbackQueueAdapter(this.queue.queue, this.store, actions), actions);
  }
}

/** bull-board in a scope of its own, its page's headers, and the four writes answered here. */
function mount(instance: FastifyInstance, queueAdapter: CallbackQueueAdapter, actions: DashboardActions): void {
  const adapter = new BullBoardFastifyAdapter();
  adapter.setBasePath(DASHBOARD_PATH);
  createBullBoard({
    queues: [queueAdapter],
    serverAdapter: adapter,
    options: {
      handlerHooks: dashboardHooks(queueAdapter),
      uiConfig: { boardTitle: 'Callback deliveries', hideDocsLink: true, jobDetails: { defaultTab: 'Logs' } },
    },
  });
  const unexpected = new UnexpectedErrorAnswer();
  const writeActions: DashboardWriteActions = {
    ...actions,
    job: (id) => queueAdapter.jobFacts(id),
    promoteAll: (actor) => queueAdapter.promoteAllAs(actor),
  };
  instance.register(
    async (scope: FastifyInstance) => {
      await scope.register(helmet, DASHBOARD_HEADERS);
      // The page itself: nothing from the internet, and no buttons for the switched-off actions.
      scope.addHook('onSend', async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
        const path = req.routeOptions.url?.slice(DASHBOARD_PATH.length) ?? '';
        const isPage =
          req.method === 'GET' &&
          !path.startsWith('/api/') &&
          !path.startsWith('/static/') &&
          /^text\/html/.test(String(reply.getHeader('content-type')));
        return isPage && typeof payload === 'string' ? dashboardPage(payload) : payload;
      });
      // Retry and Promote (one job or all) are answered here, with the operator who pressed them.
      for (const write of DASHBOARD_WRITES) {
        scope.put(write.path, async (req: OperatorRequest, reply: FastifyReply) => {
          try {
            const answer = await write.run(writeActions, req.operator!, req.params as Record<string, string>);
            return reply.status(answer.status).send(answer.body);
          } catch (e) {
            // Answered here: this scope's errors would otherwise reach bull-board's handler, which knows no refusal.
            if (e instanceof DomainError) return sendDomainError(e, reply);
            unexpected.send(e, reply);
            return reply;
          }
        });
      }
      await scope.register(adapter.registerPlugin());
    },
    { prefix: DASHBOARD_PATH },
  );
}
