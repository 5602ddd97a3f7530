import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { CallbackEvent, CallbackRecorder } from '../callbacks/callback-recorder.js';
import { CallbackUrlValidator } from '../callbacks/callback-url.validator.js';
import { notFound } from '../common/domain-error.js';
import { parseMoney } from '../common/money.js';
import { writeBack } from '../common/transaction.js';
import { lockCompanyOf, ownedCompany } from '../companies/companies.service.js';
import { Company } from '../companies/company.entity.js';
import { creditEvents, creditSnapshot } from '../companies/credit.js';
import { Loan } from '../loans/loan.entity.js';
import { CreateWithdrawalDto } from './withdrawal.dto.js';
import { WithdrawalRequest } from './withdrawal-request.entity.js';
import { assertCanDraw, assertWithdrawalTransition, transitionWithdrawal } from './withdrawal-rules.js';
import { WithdrawalStatus } from './withdrawal-status.js';

export interface WithdrawalWithCompany {
  withdrawal: WithdrawalRequest;
  company: Company;
}

@Injectable()
export class WithdrawalsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly urls: CallbackUrlValidator,
    private readonly callbacks: CallbackRecorder,
  ) {}

  async create(partnerId: string, companyId: string, dto: CreateWithdrawalDto): Promise<WithdrawalWithCompany> {
    const statusCallback = await this.urls.check('status_callback', dto.status_callback);
    const loanStatusCallback = await this.urls.check('loan_status_callback', dto.loan_status_callback);
    return this.db.transaction(async (m) => {
      const company = await ownedCompany(m, partnerId, companyId, true);
      const amount = parseMoney(dto.amount)!;
      assertCanDraw(company, amount);
      const withdrawal = await m.save(
        m.create(WithdrawalRequest, { companyId, amount, status: 'created', statusCallback, loanStatusCallback, loanId: null, updatedAt: new Date() }),
      );
      return { withdrawal, company };
    });
  }

  async get(partnerId: string, companyId: string, id: string): Promise<WithdrawalWithCompany> {
    const company = await ownedCompany(this.db.manager, partnerId, companyId);
    const withdrawal = await this.db.manager.findOne(WithdrawalRequest, { where: { id, companyId } });
    if (!withdrawal) throw notFound('Withdrawal request');
    return { withdrawal, company };
  }

  cancel(partnerId: string, companyId: string, id: string): Promise<WithdrawalWithCompany> {
    return this.db.transaction(async (m) => {
      const company = await ownedCompany(m, partnerId, companyId, true);
      return this.change(m, company, id, 'cancelled');
    });
  }

  reject(id: string): Promise<WithdrawalWithCompany> {
    return this.db.transaction(async (m) => this.change(m, await lockCompanyOf(m, WithdrawalRequest, id, 'Withdrawal request'), id, 'rejected'));
  }

  accept(id: string): Promise<WithdrawalWithCompany> {
    return this.db.transaction(async (m) => {
      const company = await lockCompanyOf(m, WithdrawalRequest, id, 'Withdrawal request');
      return this.change(m, company, id, 'accepted', (w) => {
        assertCanDraw(company, w.amount);
        return [];
      });
    });
  }

  /** Pays the money out: creates the loan and draws the amount from the credit balance. */
  payOut(id: string): Promise<WithdrawalWithCompany> {
    return this.db.transaction(async (m) => {
      const company = await lockCompanyOf(m, WithdrawalRequest, id, 'Withdrawal request');
      return this.change(m, company, id, 'paid_out', async (w) => {
        // Re-checked here: credit may have been suspended or drawn by another pay-out since acceptance.
        assertCanDraw(company, w.amount);
        const now = new Date();
        const loan = await m.save(
          m.create(Loan, { companyId: company.id, withdrawalId: w.id, principal: w.amount, outstanding: w.amount, currency: company.currency, status: 'active', updatedAt: now }),
        );
        w.loanId = loan.id;
        const before = creditSnapshot(company);
        company.borrowedAmount += w.amount;
        return creditEvents(company, before);
      });
    });
  }


  private async change(
    m: EntityManager,
    company: Company,
    id: string,
    to: WithdrawalStatus,
    effects: (w: WithdrawalRequest) => CallbackEvent[] | Promise<CallbackEvent[]> = () => [],
  ): Promise<WithdrawalWithCompany> {
    const withdrawal = await m.findOne(WithdrawalRequest, { where: { id, companyId: company.id }, lock: { mode: 'pessimistic_write' } });
    if (!withdrawal) throw notFound('Withdrawal request');
    // Refuse an illegal transition before any side effect; effects may set loanId for the body.
    assertWithdrawalTransition(withdrawal.status, to);
    const companyEvents = await effects(withdrawal);
    const own = transitionWithdrawal(company, withdrawal, to);
    await writeBack(m, WithdrawalRequest, withdrawal);
    if (companyEvents.length > 0) await writeBack(m, Company, company);
    // The acted-on resource's message first, then the company's.
    await this.callbacks.record(m, [own, ...companyEvents]);
    return { withdrawal, company };
  }
}
