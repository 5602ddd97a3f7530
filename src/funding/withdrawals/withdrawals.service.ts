import { Injectable } from '@nestjs/common';
import type { Actor } from '../../operators/index.js';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CallbackUrlValidator } from '../../egress/index.js';
import { notFound, parseMoney } from '../../platform/index.js';
import { CompanyLocks } from '../companies/company-locks.js';
import { Company } from '../companies/company.entity.js';
import {
  Changed,
  companyOfRow,
  DomainTransitions,
  partnersCompany,
  partnersParent,
} from '../domain/domain-transitions.js';
import { Loan } from '../loans/loan.entity.js';
import { CreateWithdrawalDto } from './withdrawal.dto.js';
import { WithdrawalRequest } from './withdrawal-request.entity.js';
import { assertCanDraw, WITHDRAWAL } from './withdrawal-rules.js';

export interface WithdrawalWithCompany {
  withdrawal: WithdrawalRequest;
  company: Company;
}

const withCompany = ({ row, company }: Changed<WithdrawalRequest>): WithdrawalWithCompany => ({
  withdrawal: row,
  company,
});

@Injectable()
export class WithdrawalsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly locks: CompanyLocks,
    private readonly urls: CallbackUrlValidator,
    private readonly transitions: DomainTransitions,
  ) {}

  async create(partnerId: string, companyId: string, dto: CreateWithdrawalDto): Promise<WithdrawalWithCompany> {
    const statusCallback = await this.urls.check('status_callback', dto.status_callback);
    const loanStatusCallback = await this.urls.check('loan_status_callback', dto.loan_status_callback);
    const { row: withdrawal, company } = await this.transitions.create<WithdrawalRequest>(
      WithdrawalRequest,
      partnersParent(partnerId, companyId),
      (company) => {
        const amount = parseMoney(dto.amount)!;
        assertCanDraw(company, amount);
        return {
          companyId,
          amount,
          status: 'created',
          statusCallback,
          loanStatusCallback,
          loanId: null,
          updatedAt: new Date(),
        };
      },
    );
    return { withdrawal, company };
  }

  async get(partnerId: string, companyId: string, id: string): Promise<WithdrawalWithCompany> {
    const company = await this.locks.find(this.db.manager, partnerId, companyId);
    const withdrawal = await this.db.manager.findOne(WithdrawalRequest, { where: { id, companyId } });
    if (!withdrawal) throw notFound(WITHDRAWAL.what);
    return { withdrawal, company };
  }

  cancel(partnerId: string, companyId: string, id: string): Promise<WithdrawalWithCompany> {
    return this.transitions
      .change({ resource: WITHDRAWAL, id, company: partnersCompany(partnerId, companyId), to: 'cancelled' })
      .then(withCompany);
  }

  reject(actor: Actor, id: string): Promise<WithdrawalWithCompany> {
    return this.transitions
      .change({ resource: WITHDRAWAL, id, company: companyOfRow, to: 'rejected', actor })
      .then(withCompany);
  }

  accept(actor: Actor, id: string): Promise<WithdrawalWithCompany> {
    return this.transitions
      .change({
        resource: WITHDRAWAL,
        id,
        company: companyOfRow,
        to: 'accepted',
        actor,
        effects: (w, { company }) => assertCanDraw(company, w.amount),
      })
      .then(withCompany);
  }

  /** Pays the money out: creates the loan and draws the amount from the credit balance. */
  payOut(actor: Actor, id: string): Promise<WithdrawalWithCompany> {
    return this.transitions
      .change({
        resource: WITHDRAWAL,
        id,
        company: companyOfRow,
        to: 'paid_out',
        actor,
        effects: async (w, change) => {
          const { company } = change;
          // Re-checked here: credit may have been suspended or drawn by another pay-out since acceptance.
          assertCanDraw(company, w.amount);
          const loan = await change.insert(Loan, {
            companyId: company.id,
            withdrawalId: w.id,
            principal: w.amount,
            outstanding: w.amount,
            currency: company.currency,
            status: 'active',
            updatedAt: new Date(),
          });
          // Set before the status moves: the withdrawal's callback carries the loan id.
          w.loanId = loan.id;
          company.borrowedAmount += w.amount;
        },
      })
      .then(withCompany);
  }
}
