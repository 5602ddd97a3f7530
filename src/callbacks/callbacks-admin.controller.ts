import { SHOWN_STATUSES, ShownStatus } from './callback-status.js';
import { Access } from '../access/route-access.js';
import { Doc } from '../openapi/api-doc.js';
import { Actor, AuditAction, CurrentActor } from '../operators/actor.js';
import { Redelivery } from './redelivery.js';
import { CallbackPageResponse, CallbackWithAttemptsResponse, RedeliverCountResponse } from './callback.responses.js';
import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsIn, IsInt, IsISO8601, IsOptional, IsUUID, Max, Min } from 'class-validator';
import { PageCursor, PageLimit } from '../http/page-query.js';
import { QueryInt } from '../http/validation.js';

import { attemptView, callbackView } from './callback.views.js';
import { CallbackMessage } from './callback-message.js';
import { CallbackReads } from './callback-reads.js';
import { ParseUuid } from '../http/strict-params.js';

export class ListCallbacksQuery {
  @ApiPropertyOptional({ enum: SHOWN_STATUSES })
  @IsOptional()
  @IsIn(SHOWN_STATUSES)
  status?: ShownStatus;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID()
  companyId?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 4 })
  @IsOptional()
  @QueryInt()
  @IsInt()
  @Min(0)
  @Max(4)
  message?: CallbackMessage;

  @PageLimit()
  limit?: number;

  @PageCursor()
  cursor?: string;
}

export class RedeliverFailedDto {
  @ApiProperty({ enum: ['failed'], description: 'only failed callbacks are redelivered in bulk' })
  @IsIn(['failed'])
  status: 'failed';

  @ApiPropertyOptional({ format: 'date-time', example: '2026-11-22T00:00:00Z', description: 'only callbacks created at or after this time' })
  @IsOptional()
  @IsISO8601({ strict: true })
  since?: string;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID()
  companyId?: string;
}

@ApiTags('operator: callbacks')
@Controller('admin/v1/callbacks')
export class CallbacksAdminController {
  constructor(
    private readonly callbacks: CallbackReads,
    private readonly redelivery: Redelivery,
  ) {}

  @Doc('List callbacks, newest first', CallbackPageResponse, [400])
  @Access.operator('viewer')
  @Get()
  async list(@Query() q: ListCallbacksQuery) {
    const page = await this.callbacks.list({ ...q, limit: q.limit ?? 50 });
    return { items: page.items.map(callbackView), nextCursor: page.nextCursor };
  }

  /** Sends it again from a fresh schedule with the same webhook-id. */
  @Doc('Redeliver one callback: same webhook-id, fresh schedule', null, [400, 404, 413, { 409: 'its callback URL was removed by the partner, or it is a test callback' }], { status: 202 })
  @Access.operator('operator')
  @AuditAction('callback.redeliver')
  @Post(':callbackId/redeliver')
  @HttpCode(202)
  async redeliver(@CurrentActor() actor: Actor, @Param('callbackId', ParseUuid) id: string): Promise<void> {
    await this.redelivery.redeliver(id, { actor });
  }

  /** Redelivers all failed callbacks (optionally created since a time, or of one company). */
  @Doc('Redeliver all failed callbacks (optionally since a time, of a company)', RedeliverCountResponse, [400, 413], { status: 202 })
  @Access.operator('operator')
  @AuditAction('callback.redeliver-failed')
  @Post('redeliver')
  @HttpCode(202)
  async redeliverFailed(@CurrentActor() actor: Actor, @Body() dto: RedeliverFailedDto) {
    return { count: await this.redelivery.redeliverFailed(actor, { since: dto.since ? new Date(dto.since) : undefined, companyId: dto.companyId }) };
  }

  @Doc('Show a callback with its attempts', CallbackWithAttemptsResponse, [400, 404])
  @Access.operator('viewer')
  @Get(':callbackId')
  async get(@Param('callbackId', ParseUuid) id: string) {
    const { callback, attempts } = await this.callbacks.get(id);
    return { ...callbackView(callback), attempts: attempts.map(attemptView) };
  }
}
