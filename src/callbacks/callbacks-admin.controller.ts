import { Access, Actor, AuditAction, CurrentActor } from '../operators/index.js';
import { Doc, ParseUuid } from '../platform/index.js';
import { Redelivery } from './redelivery.js';
import { BulkReplay } from './bulk-replay.js';
import {
  CallbackPageResponse,
  CallbackWithAttemptsResponse,
  REDELIVER_REFUSALS,
  RedeliverCountResponse,
  REPLAY_REFUSALS,
} from './callback.responses.js';
import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { attemptView, callbackView } from './callback.views.js';
import { CallbackReads } from './callback-reads.js';
import { AdminListCallbacksQuery, AdminReplayFailedDto, replayWindow } from './callback-filters.js';

@ApiTags('operator: callbacks')
@Controller('admin/v1/callbacks')
export class CallbacksAdminController {
  constructor(
    private readonly callbacks: CallbackReads,
    private readonly redelivery: Redelivery,
    private readonly replay: BulkReplay,
  ) {}

  @Doc(
    'List callbacks, newest first (of one partner, company, destination origin, status, message)',
    CallbackPageResponse,
    [400],
  )
  @Access.operator('viewer')
  @Get()
  async list(@Query() q: AdminListCallbacksQuery) {
    const page = await this.callbacks.list({ ...q, limit: q.limit ?? 50 });
    return { items: page.items.map((c) => callbackView(c, page.open)), nextCursor: page.nextCursor };
  }

  /** The partners' rule (redelivery-rules.ts), on any partner's callback, audited. */
  @Doc(
    'Redeliver one callback: same webhook-id; a delivered or failed one on a fresh schedule, ' +
      'a pending one attempted now; while its destination is open, it is sent now as the probe (one probe at a time)',
    null,
    [400, 404, 413, REDELIVER_REFUSALS],
    { status: 202 },
  )
  @Access.operator('operator')
  @AuditAction('callback.redeliver')
  @Post(':callbackId/redeliver')
  @HttpCode(202)
  async redeliver(@CurrentActor() actor: Actor, @Param('callbackId', ParseUuid) id: string): Promise<void> {
    await this.redelivery.redeliver(id, { actor });
  }

  @Doc(
    'Redeliver the failed callbacks created in [since, until) ' +
      '(of a partner, a company, a destination origin), at most 100,000 at once',
    RedeliverCountResponse,
    [400, 413, REPLAY_REFUSALS],
    { status: 202 },
  )
  @Access.operator('operator')
  @AuditAction('callback.redeliver-failed')
  @Post('redeliver')
  @HttpCode(202)
  async redeliverFailed(@CurrentActor() actor: Actor, @Body() dto: AdminReplayFailedDto) {
    return {
      count: await this.replay.replayAsOperator(actor, {
        ...replayWindow(dto),
        partnerId: dto.partnerId,
        companyId: dto.companyId,
      }),
    };
  }

  @Doc('Show a callback with its attempts', CallbackWithAttemptsResponse, [400, 404])
  @Access.operator('viewer')
  @Get(':callbackId')
  async get(@Param('callbackId', ParseUuid) id: string) {
    const { callback, attempts, open } = await this.callbacks.get(id);
    return { ...callbackView(callback, open), attempts: attempts.map(attemptView) };
  }
}
