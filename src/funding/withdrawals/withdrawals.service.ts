import { Injectable } from '@nestjs/common';
import type { Actor } from '../../operators/index.js';
import { parseMoney } from '../../platform/index.js';
import { CompanyRequests, OfCompany } from '../company-requests/company-requests.service.js';
import { Loan } from './loan.entity.js';
import { CreateWithdrawalDto } from './withdrawal.dto.js';
import { WithdrawalRequest } from './withdrawal-request.entity.js';
import { assertCanDraw, WITHDRAWAL } from './withdrawal-rules.js';
import { WithdrawalStatus } from './withdrawal-status.js';

@Injectable()
export class WithdrawalsService extends CompanyRequests<WithdrawalRequest, WithdrawalStatus> {
  protected readonly resource = WITHDRAWAL;

  async create(partnerId: string, companyId: string, dto: CreateWithdrawalDto): Promise<OfCompany<WithdrawalRequest>> {
    const statusCallback = await this.urls.check('status_callback', dto.status_callback);
    const loanStatusCallback = await this.urls.check('loan_status_callback', dto.loan_status_callback);
    return this.open(partnerId, companyId, (company) => {
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
    });
  }

  accept(actor: Actor, id: string): Promise<OfCompany<WithdrawalRequest>> {
    return this.operatorMove(actor, id, 'accepted', (w, { company }) => assertCanDraw(company, w.amount));
  }

  /** Pays the money out: creates the loan and draws the amount from the credit balance. */
  payOut(actor: Actor, id: string): Promise<OfCompany<WithdrawalRequest>> {
    return this.operatorMove(actor, id, 'paid_out', async (w, change) => {
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
    });
  }
}
