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

  @Post()
  @UseInterceptors(IdempotencyInterceptor)
  async create(@CurrentPartner() partner: Partner, @Body() dto: CreateCompanyDto) {
    return companyView(await this.companies.create(partner.id, dto), this.companies.names);
  }

  @Get(':companyId')
  async get(@CurrentPartner() partner: Partner, @Param('companyId', ParseUUIDPipe) id: string) {
    return companyView(await this.companies.get(partner.id, id), this.companies.names);
  }

  /** GetCreditStatus. */
  @Get(':companyId/status')
  async status(@CurrentPartner() partner: Partner, @Param('companyId', ParseUUIDPipe) id: string) {
    return creditStatusView(await this.companies.get(partner.id, id));
  }

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

  @Patch(':companyId/credit')
  @HttpCode(200)
  async updateCredit(@Param('companyId', ParseUUIDPipe) id: string, @Body() dto: UpdateCreditDto) {
    return creditStatusView(await this.companies.updateCredit(id, dto));
  }
}
