import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DomainTransitions } from '../domain/domain-transitions.js';
import { CallbackUrlValidator } from '../../egress/index.js';
import {
  APP_CONFIG,
  AppConfig,
  assertStatusChange,
  formatMoney,
  moneyFromDb,
  parseMoney,
  VariantNames,
  VARIANTS,
} from '../../platform/index.js';
import { companyCallbackProperty } from './company-callback-property.js';
import { CompanyLocks } from '../domain/company-locks.js';
import { FundingRowRepository } from '../domain/funding-row.repository.js';
import { Company } from '../domain/company.entity.js';
import { CreateCompanyDto, UpdateCreditDto } from './company.dto.js';
import { CREDIT_TRANSITIONS } from '../domain/credit-status.js';
import { assertLimitCoversBorrowed } from '../domain/credit.js';
import type { Actor } from '../../operators/index.js';

@Injectable()
export class CompaniesService {
  readonly names: VariantNames;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly locks: CompanyLocks,
    private readonly rows: FundingRowRepository,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly urls: CallbackUrlValidator,
    private readonly transitions: DomainTransitions,
  ) {
    this.names = VARIANTS[config.variant];
  }

  async create(partnerId: string, dto: CreateCompanyDto): Promise<Company> {
    const own = companyCallbackProperty(this.names, dto);
    const callbackUrl = await this.urls.check(own, dto[own]);
    return this.transitions.createCompany({
      partnerId,
      name: dto.name,
      registrationNumber: dto.registrationNumber ?? null,
      currency: dto.currency ?? 'EUR',
      callbackUrl,
      creditStatus: 'pending',
      creditLimit: 0n,
      borrowedAmount: 0n,
      annualInterestRate: '0.00',
      repaymentTermDays: 30,
      creditUpdatedAt: new Date(),
    });
  }

  get(partnerId: string, companyId: string): Promise<Company> {
    return this.locks.find(this.db.manager, partnerId, companyId);
  }

  /**
   * The partner's companies newest first, at most `limit`; with `name`, those whose name holds it
   * (any case, taken as text: `%` and `_` match themselves). The portal's company picker: one range
   * of companies_partner_idx, the partner's companies sorted.
   */
  listForPartner(partnerId: string, q: { name?: string; limit: number }): Promise<Company[]> {
    return this.rows.companiesOfPartner(partnerId, q);
  }

  /**
   * Operator change of credit limit, status or terms: a change of the company's own row
   * (DomainTransitions.changeCompany).
   */
  updateCredit(actor: Actor, companyId: string, dto: UpdateCreditDto): Promise<Company> {
    return this.transitions.changeCompany({
      id: companyId,
      actor,
      effects: (company) => {
        if (dto.creditStatus !== undefined && dto.creditStatus !== company.creditStatus) {
          assertStatusChange('creditStatus', CREDIT_TRANSITIONS, company.creditStatus, dto.creditStatus);
          company.creditStatus = dto.creditStatus;
        }
        if (dto.creditLimit !== undefined) {
          const limit = parseMoney(dto.creditLimit)!;
          assertLimitCoversBorrowed(limit, company, 'creditLimit');
          company.creditLimit = limit;
        }
        if (dto.annualInterestRate !== undefined) company.annualInterestRate = dto.annualInterestRate;
        if (dto.repaymentTermDays !== undefined) company.repaymentTermDays = dto.repaymentTermDays;
        // Keep the stored text normalised ("7.5" → "7.50") so reads match what PostgreSQL returns.
        company.annualInterestRate = formatMoney(moneyFromDb(company.annualInterestRate));
      },
    });
  }
}
