import { Injectable } from '@nestjs/common';
import type { Actor } from '../../operators/index.js';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CallbackEvent, CallbackMessage } from '../../callbacks/index.js';
import { DomainError, ErrorCode, formatMoney, invalidProperty, notFound, parseMoney } from '../../platform/index.js';
import { CompanyLocks } from '../domain/company-locks.js';
import { FundingRowRepository } from '../domain/funding-row.repository.js';
import { companyOfRow, DomainTransitions } from '../domain/domain-transitions.js';
import { Resource } from '../domain/resource.js';
import { WITHDRAWAL } from '../withdrawals/withdrawal-rules.js';
import { RegisterPaymentDto } from './loan.dto.js';
import { LoanPaymentRepository } from './loan-payment.repository.js';
import { Loan, LoanPayment } from '../withdrawals/loan.entity.js';

export interface LoanWithPayments {
  loan: Loan;
  payments: LoanPayment[];
}

const LOAN: Resource<Loan> = { entity: Loan, what: 'Loan', tracked: ['outstanding', 'status'] };

/** Clock skew we tolerate on a `paidAt` supplied by the operator. */
const FUTURE_TOLERANCE_MS = 5 * 60 * 1000;

@Injectable()
export class LoansService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly locks: CompanyLocks,
    private readonly transitions: DomainTransitions,
    private readonly rows: FundingRowRepository,
    private readonly loanPayments: LoanPaymentRepository,
  ) {}

  async get(partnerId: string, companyId: string, loanId: string): Promise<LoanWithPayments> {
    await this.locks.find(this.db.manager, partnerId, companyId);
    const loan = await this.rows.rowOfCompany(this.db.manager, Loan, loanId, companyId);
    if (!loan) throw notFound(LOAN.what);
    return { loan, payments: await this.payments(loanId) };
  }

  /** Registers a payment: reduces the loan and the borrowed amount; the last one repays both. */
  async registerPayment(actor: Actor, loanId: string, dto: RegisterPaymentDto): Promise<LoanWithPayments> {
    const paidAt = dto.paidAt ? new Date(dto.paidAt) : new Date();
    if (paidAt.getTime() > Date.now() + FUTURE_TOLERANCE_MS) throw invalidProperty('paidAt must not be in the future');
    const amount = parseMoney(dto.amount)!;
    const { row: loan } = await this.transitions.change({
      resource: LOAN,
      id: loanId,
      company: companyOfRow,
      actor,
      effects: async (loan, change) => {
        const withdrawal = await change.lock(WITHDRAWAL, loan.withdrawalId);
        if (amount > loan.outstanding) {
          throw new DomainError(
            'rule',
            ErrorCode.overpayment,
            `amount ${formatMoney(amount)} exceeds the outstanding ${formatMoney(loan.outstanding)}`,
          );
        }
        await change.insert(LoanPayment, { loanId, amount, paidAt });
        loan.outstanding -= amount;
        loan.updatedAt = new Date();
        change.company.borrowedAmount -= amount;
        // The payment's own message first, then the withdrawal's when this payment repaid it.
        const events: CallbackEvent[] = [
          {
            message: CallbackMessage.LoanPaymentRegistered,
            url: withdrawal.loanStatusCallback,
            partnerId: change.company.partnerId,
            ids: { withdrawalId: withdrawal.id, companyId: change.company.id, limitRequestId: null, loanId: loan.id },
          },
        ];
        if (loan.outstanding === 0n) {
          loan.status = 'repaid';
          events.push(change.move(WITHDRAWAL, withdrawal, 'repaid'));
        }
        return events;
      },
    });
    return { loan, payments: await this.payments(loanId) };
  }

  private payments(loanId: string): Promise<LoanPayment[]> {
    return this.loanPayments.payments(loanId);
  }
}
