import { Access, Actor, AuditAction, CurrentActor } from '../../operators/index.js';
import { Doc, IdempotencyInterceptor, ParseUuid } from '../../platform/index.js';
import { callbackDocs, CallbackMessage } from '../../callbacks/index.js';
import { LimitRequestResponse, LimitRequestStatusResponse } from './limit-request.responses.js';
import { Body, Controller, HttpCode, Param, Post, UseInterceptors } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPartner, Partner } from '../../partners/index.js';
import { CompanyRequestRoutes } from '../company-requests/company-request.routes.js';
import { CreateLimitRequestDto } from './limit-request.dto.js';
import { limitRequestStatusView, limitRequestView } from './limit-request.views.js';
import { LimitRequestsService } from './limit-requests.service.js';

const uuid = ParseUuid;

@ApiTags('limit requests')
@Controller('v1/companies/:companyId/limit-requests')
export class LimitRequestsController extends CompanyRequestRoutes({
  idParam: 'limitRequestId',
  what: 'limit request',
  cancelSummary: 'Cancel a pending limit request (callback 3)',
  response: LimitRequestResponse,
  statusResponse: LimitRequestStatusResponse,
  view: limitRequestView,
  statusView: limitRequestStatusView,
}) {
  constructor(private readonly limits: LimitRequestsService) {
    super(limits);
  }

  @Access.partner()
  @Doc('Request a credit limit', LimitRequestResponse, [400, 404, 413, { 422: 'the company credit is closed' }], {
    status: 201,
    idempotent: true,
    callbacks: callbackDocs([{ property: 'status_callback', messages: [CallbackMessage.LimitRequestStatusChanged] }]),
  })
  @Post()
  @UseInterceptors(IdempotencyInterceptor)
  async create(
    @CurrentPartner() p: Partner,
    @Param('companyId', uuid) companyId: string,
    @Body() dto: CreateLimitRequestDto,
  ) {
    return limitRequestView(await this.limits.create(p.id, companyId, dto));
  }
}

@ApiTags('operator')
@Controller('admin/v1/limit-requests')
export class LimitRequestsAdminController {
  constructor(private readonly limits: LimitRequestsService) {}

  @Doc('Approve: sets the credit limit, activates pending credit (callbacks 3, 0, 2)', LimitRequestResponse, [
    400,
    404,
    409,
    413,
    { 422: 'the company credit is closed, or the amount is below the borrowed amount' },
  ])
  @Access.operator('operator')
  @AuditAction('limit-request.approve')
  @Post(':limitRequestId/approve')
  @HttpCode(200)
  async approve(@CurrentActor() actor: Actor, @Param('limitRequestId', uuid) id: string) {
    return limitRequestView(await this.limits.approve(actor, id));
  }

  @Doc('Reject a pending limit request (callback 3)', LimitRequestResponse, [400, 404, 409, 413])
  @Access.operator('operator')
  @AuditAction('limit-request.reject')
  @Post(':limitRequestId/reject')
  @HttpCode(200)
  async reject(@CurrentActor() actor: Actor, @Param('limitRequestId', uuid) id: string) {
    return limitRequestView(await this.limits.reject(actor, id));
  }
}
