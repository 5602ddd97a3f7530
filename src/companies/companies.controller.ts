import { Doc } from '../common/api-doc.js';
import { CompanyResponse, CreditStatusResponse, TermsResponse } from '../common/responses.js';
import { Body, Controller, Get, HttpCode, Param, ParseUUIDPipe, Patch, Post, UseGuards, UseInterceptors } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { IdempotencyInterceptor } from '../common/idempotency.interceptor.js';
import { OnlyVariant } from '../config/variant.guard.js';
import { AdminGuard, CurrentPartner, PartnerGuard } from '../partners/auth.guards.js';
import { Partner } from '../partners/partner.entity.js';
import { CompaniesService } from './companies.service.js';
import { CreateCompanyDto, UpdateCreditDto } from './company.dto.js';
import { companyView, creditStatusView, termsView } from './company.views.js';

@ApiTags('companies')
@ApiBearerAuth()
@UseGuards(PartnerGuard)
@Controller('v1/companies')
export class CompaniesController {
  constructor(private readonly companies: CompaniesService) {}

  @Doc('Create an organization', CompanyResponse, [400, 401, 413], { status: 201, idempotent: true })
  @Post()
  @UseInterceptors(IdempotencyInterceptor)
  async create(@CurrentPartner() partner: Partner, @Body() dto: CreateCompanyDto) {
    return companyView(await this.companies.create(partner.id, dto), this.companies.names);
  }

  @Doc('Read an organization', CompanyResponse, [400, 401, 404])
  @Get(':companyId')
  async get(@CurrentPartner() partner: Partner, @Param('companyId', ParseUUIDPipe) id: string) {
    return companyView(await this.companies.get(partner.id, id), this.companies.names);
  }

  /** GetCreditStatus. */
  @Doc('GetCreditStatus: credit limit, status, borrowed amount and balance', CreditStatusResponse, [400, 401, 404])
  @Get(':companyId/status')
  async status(@CurrentPartner() partner: Partner, @Param('companyId', ParseUUIDPipe) id: string) {
    return creditStatusView(await this.companies.get(partner.id, id));
  }

  @Doc('Credit terms (variant B only; 404 in variant A)', TermsResponse, [400, 401, 404])
  @Get(':companyId/terms')
  @OnlyVariant('B')
  async terms(@CurrentPartner() partner: Partner, @Param('companyId', ParseUUIDPipe) id: string) {
    return termsView(await this.companies.get(partner.id, id));
  }
}

@ApiTags('operator')
@ApiBearerAuth()
@UseGuards(AdminGuard)
@Controller('admin/v1/companies')
export class CreditAdminController {
  constructor(private readonly companies: CompaniesService) {}

  @Doc('Change credit limit, status or terms (callbacks 0 and/or 2)', CreditStatusResponse, [400, 401, 404, 409, 422])
  @Patch(':companyId/credit')
  @HttpCode(200)
  async updateCredit(@Param('companyId', ParseUUIDPipe) id: string, @Body() dto: UpdateCreditDto) {
    return creditStatusView(await this.companies.updateCredit(id, dto));
  }
}
