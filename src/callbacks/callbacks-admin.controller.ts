import { Controller, Get, Param, ParseUUIDPipe, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, IsUUID, Max, Min } from 'class-validator';
import { AdminGuard } from '../partners/auth.guards.js';
import { CallbackStatus } from './callback.entity.js';
import { attemptView, callbackView } from './callback.views.js';
import { CallbackMessage } from './callback-message.js';
import { CallbacksAdminService } from './callbacks-admin.service.js';

export class ListCallbacksQuery {
  @ApiPropertyOptional({ enum: ['pending', 'delivered', 'failed'] })
  @IsOptional()
  @IsIn(['pending', 'delivered', 'failed'])
  status?: CallbackStatus;

  @ApiPropertyOptional()
  @IsOptional()
  @IsUUID()
  companyId?: string;

  @ApiPropertyOptional({ minimum: 0, maximum: 4 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(4)
  message?: CallbackMessage;

  @ApiPropertyOptional({ default: 50, minimum: 1, maximum: 200 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  limit?: number;

  @ApiPropertyOptional({ description: 'nextCursor of the previous page' })
  @IsOptional()
  @IsString()
  cursor?: string;
}

@ApiTags('operator: callbacks')
@ApiBearerAuth()
@UseGuards(AdminGuard)
@Controller('admin/v1/callbacks')
export class CallbacksAdminController {
  constructor(private readonly callbacks: CallbacksAdminService) {}

  @Get()
  async list(@Query() q: ListCallbacksQuery) {
    const page = await this.callbacks.list({ ...q, limit: q.limit ?? 50 });
    return { items: page.items.map(callbackView), nextCursor: page.nextCursor };
  }

  @Get(':callbackId')
  async get(@Param('callbackId', ParseUUIDPipe) id: string) {
    const { callback, attempts } = await this.callbacks.get(id);
    return { ...callbackView(callback), attempts: attempts.map(attemptView) };
  }
}
