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

  @Post()
  @UseInterceptors(IdempotencyInterceptor)
  async create(@CurrentPartner() p: Partner, @Param('companyId', uuid) companyId: string, @Body() dto: CreateWithdrawalDto) {
    return withdrawalView(await this.withdrawals.create(p.id, companyId, dto));
  }

  @Get(':withdrawalRequestId')
  async get(@CurrentPartner() p: Partner, @Param('companyId', uuid) companyId: string, @Param('withdrawalRequestId', uuid) id: string) {
    return withdrawalView(await this.withdrawals.get(p.id, companyId, id));
  }

  @Get(':withdrawalRequestId/status')
  async status(@CurrentPartner() p: Partner, @Param('companyId', uuid) companyId: string, @Param('withdrawalRequestId', uuid) id: string) {
    return withdrawalStatusView(await this.withdrawals.get(p.id, companyId, id));
  }

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

  @Post(':withdrawalRequestId/accept')
  @HttpCode(200)
  async accept(@Param('withdrawalRequestId', uuid) id: string) {
    return withdrawalView(await this.withdrawals.accept(id));
  }

  @Post(':withdrawalRequestId/reject')
  @HttpCode(200)
  async reject(@Param('withdrawalRequestId', uuid) id: string) {
    return withdrawalView(await this.withdrawals.reject(id));
  }

  @Post(':withdrawalRequestId/pay-out')
  @HttpCode(200)
  async payOut(@Param('withdrawalRequestId', uuid) id: string) {
    return withdrawalView(await this.withdrawals.payOut(id));
  }
}
