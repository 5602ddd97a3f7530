import { Access, Actor, AuditAction, CurrentActor } from '../../operators/index.js';
import { Doc, IdempotencyInterceptor, ParseUuid } from '../../platform/index.js';
import { LoanResponse } from './loan.responses.js';
import { Body, Controller, Get, Param, Post, UseInterceptors } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPartner, Partner } from '../../partners/index.js';
import { RegisterPaymentDto } from './loan.dto.js';
import { loanView } from './loan.views.js';
import { LoansService } from './loans.service.js';

const uuid = ParseUuid;

@ApiTags('loans')
@Access.partner()
@Controller('v1/companies/:companyId/loans')
export class LoansController {
  constructor(private readonly loans: LoansService) {}

  @Doc('Read a loan with its payments', LoanResponse, [400, 404])
  @Get(':loanId')
  async get(
    @CurrentPartner() p: Partner,
    @Param('companyId', uuid) companyId: string,
    @Param('loanId', uuid) id: string,
  ) {
    return loanView(await this.loans.get(p.id, companyId, id));
  }
}

@ApiTags('operator')
@Controller('admin/v1/loans')
export class LoansAdminController {
  constructor(private readonly loans: LoansService) {}

  @Doc(
    'Register a payment (callbacks 4, 1 when repaid, 2)',
    LoanResponse,
    [400, 404, 413, { 422: 'the amount exceeds the outstanding amount' }],
    {
      status: 201,
      idempotent: true,
    },
  )
  @Access.operator('operator')
  @AuditAction('loan.payment.register')
  @Post(':loanId/payments')
  @UseInterceptors(IdempotencyInterceptor)
  async registerPayment(
    @CurrentActor() actor: Actor,
    @Param('loanId', uuid) id: string,
    @Body() dto: RegisterPaymentDto,
  ) {
    return loanView(await this.loans.registerPayment(actor, id, dto));
  }
}
