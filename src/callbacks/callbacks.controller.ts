import { Access } from '../operators/index.js';
import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Doc, ParseUuid } from '../platform/index.js';
import {
  CallbackPageResponse,
  CallbackWithAttemptsResponse,
  REDELIVER_REFUSALS,
  RedeliverCountResponse,
  REPLAY_REFUSALS,
} from './callback.responses.js';
import { CurrentPartner, Partner } from '../partners/index.js';
import { ListCallbacksQuery, ReplayFailedDto, replayWindow } from './callback-filters.js';
import { BulkReplay } from './bulk-replay.js';
import { CallbackReads } from './callback-reads.js';
import { Redelivery } from './redelivery.js';
import { attemptView, callbackView } from './callback.views.js';

/**
 * The partner's own delivery log: the operator's reads and redelivery, scoped to the partner's
 * callbacks (another partner's id answers 404, as everywhere under /v1).
 *
 * Route order matters under /v1/callbacks: fixed paths (`source-ips`, `destinations`, in their
 * own controllers registered before this one in AppModule) must be matched before
 * `:callbackId`, which would otherwise take them for a malformed id (400). A fixed path added
 * to this controller goes above `get` below.
 */
@ApiTags('callbacks')
@Access.partner()
@Controller('v1/callbacks')
export class CallbacksController {
  constructor(
    private readonly callbacks: CallbackReads,
    private readonly redelivery: Redelivery,
    private readonly replay: BulkReplay,
  ) {}

  @Doc(
    "List the partner's callbacks, newest first (a companyId of another partner lists nothing)",
    CallbackPageResponse,
    [400, 401],
  )
  @Get()
  async list(@CurrentPartner() partner: Partner, @Query() q: ListCallbacksQuery) {
    const page = await this.callbacks.list({ ...q, limit: q.limit ?? 50 }, { partnerId: partner.id });
    return { items: page.items.map((c) => callbackView(c, page.open)), nextCursor: page.nextCursor };
  }

  @Doc('Show one of your callbacks with its attempts', CallbackWithAttemptsResponse, [400, 401, 404])
  @Get(':callbackId')
  async get(@CurrentPartner() partner: Partner, @Param('callbackId', ParseUuid) id: string) {
    const { callback, attempts, open } = await this.callbacks.get(id, { partnerId: partner.id });
    return { ...callbackView(callback, open), attempts: attempts.map(attemptView) };
  }

  /** The operators' rule (redelivery-rules.ts), on the partner's own callbacks. */
  @Doc(
    'Redeliver one of your callbacks: same webhook-id; a delivered or failed one on a fresh schedule, ' +
      'a pending one attempted now; while its destination is open, it is sent now as the probe (one probe at a time)',
    null,
    [400, 401, 404, REDELIVER_REFUSALS],
    { status: 202 },
  )
  @Post(':callbackId/redeliver')
  @HttpCode(202)
  async redeliver(@CurrentPartner() partner: Partner, @Param('callbackId', ParseUuid) id: string): Promise<void> {
    await this.redelivery.redeliver(id, { partnerId: partner.id });
  }

  /** Replay after an outage: each failed callback of the window sent again as a redelivery sends it. */
  @Doc(
    'Redeliver your failed callbacks created in [since, until) (at one destination origin), ' +
      'at most 100,000 at once; test callbacks are not',
    RedeliverCountResponse,
    [400, 401, 413, REPLAY_REFUSALS],
    { status: 202 },
  )
  @Post('redeliver')
  @HttpCode(202)
  async redeliverFailed(@CurrentPartner() partner: Partner, @Body() dto: ReplayFailedDto) {
    return { count: await this.replay.replayForPartner(partner.id, replayWindow(dto)) };
  }
}
