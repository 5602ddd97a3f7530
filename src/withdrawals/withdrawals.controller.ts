import { Doc } from '../common/api-doc.js';
import { WithdrawalResponse, WithdrawalStatusResponse } from '../common/responses.js';
import { Body, Controller, Get, HttpCode, Param, ParseUUIDPipe, Post, UseGuards, UseInterceptors } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { IdempotencyInterceptor } from '../common/idempotency.interceptor.js';
import { OnlyVariant } from '../config/variant.guard.js';
import { AdminGuard, CurrentPartner, PartnerGuard } from '../partners/auth.guards.js';
import { Partner } from '../partners/partner.entity.js';
import { CreateWithdrawalDto } from './withdrawal.dto.js';
import { withdrawalStatusView, withdrawalView } from './withdrawal.views.js';
import { WithdrawalsService } from './withdrawals.service.js';

const uuid = new ParseUUIDPipe();

/** The partner routes; mounted under each variant's collection path by the two classes below. */
abstract class WithdrawalsRoutes {
  constructor(protected readonly withdrawals: WithdrawalsService) {}

  @Doc('Request a withdrawal', WithdrawalResponse, [400, 401, 404, 413, 422], { status: 201, idempotent: true })
  @Post()
  @UseInterceptors(IdempotencyInterceptor)
  async create(@CurrentPartner() p: Partner, @Param('companyId', uuid) companyId: string, @Body() dto: CreateWithdrawalDto) {
    return withdrawalView(await this.withdrawals.create(p.id, companyId, dto));
  }

  @Doc('Read a withdrawal request', WithdrawalResponse, [400, 401, 404])
  @Get(':withdrawalRequestId')
  async get(@CurrentPartner() p: Partner, @Param('companyId', uuid) companyId: string, @Param('withdrawalRequestId', uuid) id: string) {
    return withdrawalView(await this.withdrawals.get(p.id, companyId, id));
  }

  @Doc('Read a withdrawal request status', WithdrawalStatusResponse, [400, 401, 404])
  @Get(':withdrawalRequestId/status')
  async status(@CurrentPartner() p: Partner, @Param('companyId', uuid) companyId: string, @Param('withdrawalRequestId', uuid) id: string) {
    return withdrawalStatusView(await this.withdrawals.get(p.id, companyId, id));
  }

  @Doc('Cancel a created or accepted withdrawal request (callback 1)', WithdrawalResponse, [400, 401, 404, 409])
  @Post(':withdrawalRequestId/cancel')
  @HttpCode(200)
  async cancel(@CurrentPartner() p: Partner, @Param('companyId', uuid) companyId: string, @Param('withdrawalRequestId', uuid) id: string) {
    return withdrawalView(await this.withdrawals.cancel(p.id, companyId, id));
  }
}

@ApiTags('withdrawal requests (variant A)')
@ApiBearerAuth()
@OnlyVariant('A')
@UseGuards(PartnerGuard)
@Controller('v1/companies/:companyId/withdrawal-requests')
export class WithdrawalsControllerA extends WithdrawalsRoutes {
  constructor(withdrawals: WithdrawalsService) {
    super(withdrawals);
  }
}

@ApiTags('withdrawal requests (variant B)')
@ApiBearerAuth()
@OnlyVariant('B')
@UseGuards(PartnerGuard)
@Controller('v1/companies/:companyId/withdrawal')
export class WithdrawalsControllerB extends WithdrawalsRoutes {
  constructor(withdrawals: WithdrawalsService) {
    super(withdrawals);
  }
}

@ApiTags('operator')
@ApiBearerAuth()
@UseGuards(AdminGuard)
@Controller('admin/v1/withdrawal-requests')
export class WithdrawalsAdminController {
  constructor(private readonly withdrawals: WithdrawalsService) {}

  @Doc('Accept (callback 1)', WithdrawalResponse, [400, 401, 404, 409, 422])
  @Post(':withdrawalRequestId/accept')
  @HttpCode(200)
  async accept(@Param('withdrawalRequestId', uuid) id: string) {
    return withdrawalView(await this.withdrawals.accept(id));
  }

  @Doc('Reject (callback 1)', WithdrawalResponse, [400, 401, 404, 409])
  @Post(':withdrawalRequestId/reject')
  @HttpCode(200)
  async reject(@Param('withdrawalRequestId', uuid) id: string) {
    return withdrawalView(await this.withdrawals.reject(id));
  }

  @Doc('Pay out: creates the loan, draws the balance (callbacks 1, 2)', WithdrawalResponse, [400, 401, 404, 409, 422])
  @Post(':withdrawalRequestId/pay-out')
  @HttpCode(200)
  async payOut(@Param('withdrawalRequestId', uuid) id: string) {
    return withdrawalView(await this.withdrawals.payOut(id));
  }
}
