import { Access } from '../access/route-access.js';
import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Doc } from '../openapi/api-doc.js';
import { CallbackPageResponse, CallbackWithAttemptsResponse } from './callback.responses.js';
import { CurrentPartner } from '../partners/current-partner.js';
import { Partner } from '../partners/partner.entity.js';
import { ListCallbacksQuery } from './callbacks-admin.controller.js';
import { CallbackReads } from './callback-reads.js';
import { Redelivery } from './redelivery.js';
import { attemptView, callbackView } from './callback.views.js';
import { ParseUuid } from '../http/strict-params.js';

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
  ) {}

  @Doc(
    "List the partner's callbacks, newest first (a companyId of another partner lists nothing)",
    CallbackPageResponse,
    [400, 401],
  )
  @Get()
  async list(@CurrentPartner() partner: Partner, @Query() q: ListCallbacksQuery) {
    const page = await this.callbacks.list({ ...q, limit: q.limit ?? 50 }, { partnerId: partner.id });
    return { items: page.items.map(callbackView), nextCursor: page.nextCursor };
  }

  @Doc('Show one of your callbacks with its attempts', CallbackWithAttemptsResponse, [400, 401, 404])
  @Get(':callbackId')
  async get(@CurrentPartner() partner: Partner, @Param('callbackId', ParseUuid) id: string) {
    const { callback, attempts } = await this.callbacks.get(id, { partnerId: partner.id });
    return { ...callbackView(callback), attempts: attempts.map(attemptView) };
  }

  /** A delivered or failed callback only: a pending one is still on its schedule. */
  @Doc('Redeliver a delivered or failed callback: same webhook-id, fresh schedule', null, [400, 401, 404, { 409: 'the callback is still pending, its callback URL was removed, or it is a test callback' }], { status: 202 })
  @Post(':callbackId/redeliver')
  @HttpCode(202)
  async redeliver(@CurrentPartner() partner: Partner, @Param('callbackId', ParseUuid) id: string): Promise<void> {
    await this.redelivery.redeliver(id, { partnerId: partner.id });
  }
}
