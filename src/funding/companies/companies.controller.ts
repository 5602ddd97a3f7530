import { Access, Actor, AuditAction, CurrentActor } from '../../operators/index.js';
import { Doc, IdempotencyInterceptor, OnlyVariant, ParseUuid, VARIANTS } from '../../platform/index.js';
import { callbackDocs, CallbackMessage, CallbackTarget } from '../../callbacks/index.js';
import { CompanyResponse, CreditStatusResponse, TermsResponse } from './company.responses.js';
import { Body, Controller, Get, HttpCode, Param, Patch, Post, UseInterceptors } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPartner, Partner } from '../../partners/index.js';
import { CompaniesService } from './companies.service.js';
import { CreateCompanyDto, UpdateCreditDto } from './company.dto.js';
import { companyView, creditStatusView, termsView } from './company.views.js';

/**
 * The organization's URL gets 0 and 2; its property is named per variant (docs/partners.md,
 * "Registering callback URLs").
 */
const COMPANY_CALLBACKS: CallbackTarget[] = (['A', 'B'] as const).map((variant) => ({
  property: VARIANTS[variant].companyCallbackProperty,
  messages: [CallbackMessage.CreditLimitUpdated, CallbackMessage.CreditBalanceUpdated],
  variant,
}));

@ApiTags('companies')
@Access.partner()
@Controller('v1/companies')
export class CompaniesController {
  constructor(private readonly companies: CompaniesService) {}

  @Doc('Create an organization', CompanyResponse, [400, 413], {
    status: 201,
    idempotent: true,
    callbacks: callbackDocs(COMPANY_CALLBACKS),
  })
  @Post()
  @UseInterceptors(IdempotencyInterceptor)
  async create(@CurrentPartner() partner: Partner, @Body() dto: CreateCompanyDto) {
    return companyView(await this.companies.create(partner.id, dto), this.companies.names);
  }

  @Doc('Read an organization', CompanyResponse, [400, 404])
  @Get(':companyId')
  async get(@CurrentPartner() partner: Partner, @Param('companyId', ParseUuid) id: string) {
    return companyView(await this.companies.get(partner.id, id), this.companies.names);
  }

  /** GetCreditStatus. */
  @Doc('GetCreditStatus: credit limit, status, borrowed amount and balance', CreditStatusResponse, [400, 404])
  @Get(':companyId/status')
  async status(@CurrentPartner() partner: Partner, @Param('companyId', ParseUuid) id: string) {
    return creditStatusView(await this.companies.get(partner.id, id));
  }
}

/** Variant B only: in variant A the route does not exist (404). */
@ApiTags('companies')
@Access.partner()
@OnlyVariant('B')
@Controller('v1/companies')
export class CreditTermsController {
  constructor(private readonly companies: CompaniesService) {}

  @Doc('Credit terms: interest rate and repayment term', TermsResponse, [400, 404])
  @Get(':companyId/terms')
  async terms(@CurrentPartner() partner: Partner, @Param('companyId', ParseUuid) id: string) {
    return termsView(await this.companies.get(partner.id, id));
  }
}

@ApiTags('operator')
@Controller('admin/v1/companies')
export class CreditAdminController {
  constructor(private readonly companies: CompaniesService) {}

  @Doc('Change credit limit, status or terms (callbacks 0 and/or 2)', CreditStatusResponse, [
    400,
    404,
    413,
    {
      409:
        'the credit status cannot change from the current one (the message names it); ' +
        'or another request changed the company after each of the 50 times this change read it ' +
        '(nothing was written: try again)',
      422: 'creditLimit below the borrowed amount',
    },
  ])
  @Access.operator('operator')
  @AuditAction('company.credit.update')
  @Patch(':companyId/credit')
  @HttpCode(200)
  async updateCredit(
    @CurrentActor() actor: Actor,
    @Param('companyId', ParseUuid) id: string,
    @Body() dto: UpdateCreditDto,
  ) {
    return creditStatusView(await this.companies.updateCredit(actor, id, dto));
  }
}
