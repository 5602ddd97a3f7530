import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CallbackEvent, CallbackRecorder } from '../callbacks/callback-recorder.js';
import { CallbackMessage } from '../callbacks/callback-message.js';
import { DomainError, invalidProperty, notFound } from '../common/domain-error.js';
import { formatMoney, parseMoney } from '../common/money.js';
import { writeBack } from '../common/transaction.js';
import { lockCompanyOf, ownedCompany } from '../companies/companies.service.js';
import { Company } from '../companies/company.entity.js';
import { creditEvents, creditSnapshot } from '../companies/credit.js';
import { WithdrawalRequest } from '../withdrawals/withdrawal-request.entity.js';
import { transitionWithdrawal } from '../withdrawals/withdrawal-rules.js';
import { RegisterPaymentDto } from './loan.dto.js';
import { Loan, LoanPayment } from './loan.entity.js';

export interface LoanWithPayments {
  loan: Loan;
  payments: LoanPayment[];
}

/** Clock skew we tolerate on a `paidAt` supplied by the operator. */
const FUTURE_TOLERANCE_MS = 5 * 60 * 1000;

@Injectable()
export class LoansService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly callbacks: CallbackRecorder,
  ) {}

  async get(partnerId: string, companyId: string, loanId: string): Promise<LoanWithPayments> {
    await ownedCompany(this.db.manager, partnerId, companyId);
    const loan = await this.db.manager.findOne(Loan, { where: { id: loanId, companyId } });
    if (!loan) throw notFound('Loan');
    return { loan, payments: await this.payments(loanId) };
  }

  /** Registers a payment: reduces the loan and the borrowed amount; the last one repays both. */
  async registerPayment(loanId: string, dto: RegisterPaymentDto): Promise<LoanWithPayments> {
    const paidAt = dto.paidAt ? new Date(dto.paidAt) : new Date();
    if (paidAt.getTime() > Date.now() + FUTURE_TOLERANCE_MS) throw invalidProperty('paidAt must not be in the future');
    const amount = parseMoney(dto.amount)!;
    const result = await this.db.transaction(async (m) => {
      // The company first, as on every path; its lock serialises everything beneath it.
      const company = await lockCompanyOf(m, Loan, loanId, 'Loan');
      const loan = await m.findOneOrFail(Loan, { where: { id: loanId }, lock: { mode: 'pessimistic_write' } });
      const withdrawal = await m.findOneOrFail(WithdrawalRequest, { where: { id: loan.withdrawalId }, lock: { mode: 'pessimistic_write' } });
      if (amount > loan.outstanding) {
        throw new DomainError('rule', 'LOAN.OVERPAYMENT', `amount ${formatMoney(amount)} exceeds the outstanding ${formatMoney(loan.outstanding)}`);
      }
      const payment = await m.save(m.create(LoanPayment, { loanId, amount, paidAt }));
      const before = creditSnapshot(company);
      loan.outstanding -= amount;
      loan.updatedAt = new Date();
      company.borrowedAmount -= amount;
      const events: CallbackEvent[] = [
        {
          message: CallbackMessage.LoanPaymentRegistered,
          url: withdrawal.loanStatusCallback,
          partnerId: company.partnerId,
          ids: { withdrawalId: withdrawal.id, companyId: company.id, limitRequestId: null, loanId: loan.id },
        },
      ];
      if (loan.outstanding === 0n) {
        loan.status = 'repaid';
        events.push(transitionWithdrawal(company, withdrawal, 'repaid'));
        await writeBack(m, WithdrawalRequest, withdrawal);
      }
      events.push(...creditEvents(company, before));
      await writeBack(m, Loan, loan);
      await writeBack(m, Company, company);
      // The payment's own message first, then the withdrawal's (if repaid), then the company's.
      await this.callbacks.record(m, events);
      return { loan, payment };
    });
    return { loan: result.loan, payments: await this.payments(loanId) };
  }

  private payments(loanId: string): Promise<LoanPayment[]> {
    return this.db.manager.find(LoanPayment, { where: { loanId }, order: { paidAt: 'ASC', createdAt: 'ASC' } });
  }
}
