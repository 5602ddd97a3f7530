import { Body, Controller, Get, HttpCode, Param, ParseUUIDPipe, Post, UseGuards, UseInterceptors } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { IdempotencyInterceptor } from '../common/idempotency.interceptor.js';
import { AdminGuard, CurrentPartner, PartnerGuard } from '../partners/auth.guards.js';
import { Partner } from '../partners/partner.entity.js';
import { CreateLimitRequestDto } from './limit-request.dto.js';
import { limitRequestStatusView, limitRequestView } from './limit-request.views.js';
import { LimitRequestsService } from './limit-requests.service.js';

const uuid = new ParseUUIDPipe();

@ApiTags('limit requests')
@ApiBearerAuth()
@UseGuards(PartnerGuard)
@Controller('v1/companies/:companyId/limit-requests')
export class LimitRequestsController {
  constructor(private readonly limits: LimitRequestsService) {}

  @Post()
  @UseInterceptors(IdempotencyInterceptor)
  async create(@CurrentPartner() p: Partner, @Param('companyId', uuid) companyId: string, @Body() dto: CreateLimitRequestDto) {
    return limitRequestView(await this.limits.create(p.id, companyId, dto));
  }

  @Get(':limitRequestId')
  async get(@CurrentPartner() p: Partner, @Param('companyId', uuid) companyId: string, @Param('limitRequestId', uuid) id: string) {
    return limitRequestView(await this.limits.get(p.id, companyId, id));
  }

  @Get(':limitRequestId/status')
  async status(@CurrentPartner() p: Partner, @Param('companyId', uuid) companyId: string, @Param('limitRequestId', uuid) id: string) {
    return limitRequestStatusView(await this.limits.get(p.id, companyId, id));
  }

  @Post(':limitRequestId/cancel')
  @HttpCode(200)
  async cancel(@CurrentPartner() p: Partner, @Param('companyId', uuid) companyId: string, @Param('limitRequestId', uuid) id: string) {
    return limitRequestView(await this.limits.cancel(p.id, companyId, id));
  }
}

@ApiTags('operator')
@ApiBearerAuth()
@UseGuards(AdminGuard)
@Controller('admin/v1/limit-requests')
export class LimitRequestsAdminController {
  constructor(private readonly limits: LimitRequestsService) {}

  @Post(':limitRequestId/approve')
  @HttpCode(200)
  async approve(@Param('limitRequestId', uuid) id: string) {
    return limitRequestView(await this.limits.approve(id));
  }

  @Post(':limitRequestId/reject')
  @HttpCode(200)
  async reject(@Param('limitRequestId', uuid) id: string) {
    return limitRequestView(await this.limits.reject(id));
  }
}
