import { Access, Actor, AuditAction, CurrentActor } from '../../operators/index.js';
import { Doc, IdempotencyInterceptor, OnlyVariant, ParseUuid } from '../../platform/index.js';
import { callbackDocs, CallbackMessage } from '../../callbacks/index.js';
import { WithdrawalResponse, WithdrawalStatusResponse } from './withdrawal.responses.js';
import { Body, Controller, HttpCode, Param, Post, UseInterceptors } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPartner, Partner } from '../../partners/index.js';
import { CreateWithdrawalDto } from './withdrawal.dto.js';
import { withdrawalStatusView, withdrawalView } from './withdrawal.views.js';
import { WithdrawalsService } from './withdrawals.service.js';
import { CompanyRequestRoutes } from '../company-requests/company-request.routes.js';

const uuid = ParseUuid;
const NO_DRAW = 'the company credit is not active, or the amount exceeds the credit balance';

/** The partner routes; mounted under each variant's collection path by the two classes below. */
abstract class WithdrawalsRoutes extends CompanyRequestRoutes({
  idParam: 'withdrawalRequestId',
  what: 'withdrawal request',
  cancelSummary: 'Cancel a created or accepted withdrawal request (callback 1)',
  response: WithdrawalResponse,
  statusResponse: WithdrawalStatusResponse,
  view: withdrawalView,
  statusView: withdrawalStatusView,
}) {
  constructor(private readonly withdrawals: WithdrawalsService) {
    super(withdrawals);
  }

  @Access.partner()
  @Doc('Request a withdrawal', WithdrawalResponse, [400, 404, 413, { 422: NO_DRAW }], {
    status: 201,
    idempotent: true,
    callbacks: callbackDocs([
      { property: 'status_callback', messages: [CallbackMessage.WithdrawalRequestStatusChanged] },
      { property: 'loan_status_callback', messages: [CallbackMessage.LoanPaymentRegistered] },
    ]),
  })
  @Post()
  @UseInterceptors(IdempotencyInterceptor)
  async create(
    @CurrentPartner() p: Partner,
    @Param('companyId', uuid) companyId: string,
    @Body() dto: CreateWithdrawalDto,
  ) {
    return withdrawalView(await this.withdrawals.create(p.id, companyId, dto));
  }
}

@ApiTags('withdrawal requests')
@OnlyVariant('A')
@Controller('v1/companies/:companyId/withdrawal-requests')
export class WithdrawalsControllerA extends WithdrawalsRoutes {
  constructor(withdrawals: WithdrawalsService) {
    super(withdrawals);
  }
}

@ApiTags('withdrawal requests')
@OnlyVariant('B')
@Controller('v1/companies/:companyId/withdrawal')
export class WithdrawalsControllerB extends WithdrawalsRoutes {
  constructor(withdrawals: WithdrawalsService) {
    super(withdrawals);
  }
}

@ApiTags('operator')
@Controller('admin/v1/withdrawal-requests')
export class WithdrawalsAdminController {
  constructor(private readonly withdrawals: WithdrawalsService) {}

  @Doc('Accept (callback 1)', WithdrawalResponse, [400, 404, 409, 413, { 422: NO_DRAW }])
  @Access.operator('operator')
  @AuditAction('withdrawal-request.accept')
  @Post(':withdrawalRequestId/accept')
  @HttpCode(200)
  async accept(@CurrentActor() actor: Actor, @Param('withdrawalRequestId', uuid) id: string) {
    return withdrawalView(await this.withdrawals.accept(actor, id));
  }

  @Doc('Reject (callback 1)', WithdrawalResponse, [400, 404, 409, 413])
  @Access.operator('operator')
  @AuditAction('withdrawal-request.reject')
  @Post(':withdrawalRequestId/reject')
  @HttpCode(200)
  async reject(@CurrentActor() actor: Actor, @Param('withdrawalRequestId', uuid) id: string) {
    return withdrawalView(await this.withdrawals.reject(actor, id));
  }

  @Doc('Pay out: creates the loan, draws the balance (callbacks 1, 2)', WithdrawalResponse, [
    400,
    404,
    409,
    413,
    { 422: NO_DRAW },
  ])
  @Access.operator('operator')
  @AuditAction('withdrawal-request.pay-out')
  @Post(':withdrawalRequestId/pay-out')
  @HttpCode(200)
  async payOut(@CurrentActor() actor: Actor, @Param('withdrawalRequestId', uuid) id: string) {
    return withdrawalView(await this.withdrawals.payOut(actor, id));
  }
}
