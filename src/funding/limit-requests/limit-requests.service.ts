import { Injectable } from '@nestjs/common';
import type { Actor } from '../../operators/index.js';
import { DomainError, ErrorCode, parseMoney } from '../../platform/index.js';
import { assertLimitCoversBorrowed } from '../domain/credit.js';
import { CompanyRequests, OfCompany } from '../company-requests/company-requests.service.js';
import { CreateLimitRequestDto } from './limit-request.dto.js';
import { LimitRequest } from './limit-request.entity.js';
import { LIMIT_REQUEST } from './limit-request-rules.js';
import { LimitRequestStatus } from './limit-request-status.js';

@Injectable()
export class LimitRequestsService extends CompanyRequests<LimitRequest, LimitRequestStatus> {
  protected readonly resource = LIMIT_REQUEST;

  async create(partnerId: string, companyId: string, dto: CreateLimitRequestDto): Promise<OfCompany<LimitRequest>> {
    const statusCallback = await this.urls.check('status_callback', dto.status_callback);
    return this.open(partnerId, companyId, (company) => {
      if (company.creditStatus === 'closed') {
        const message = 'The company credit is closed; no limit can be requested';
        throw new DomainError('rule', ErrorCode.credit_closed, message);
      }
      const amount = parseMoney(dto.amount)!;
      return { companyId, amount, status: 'pending', statusCallback, updatedAt: new Date() };
    });
  }

  /** Approval grants the requested amount as the credit limit and activates pending credit. */
  approve(actor: Actor, id: string): Promise<OfCompany<LimitRequest>> {
    return this.operatorMove(actor, id, 'approved', (request, { company }) => {
      if (company.creditStatus === 'closed') {
        const message = 'The company credit is closed; the limit request cannot be approved';
        throw new DomainError('rule', ErrorCode.credit_closed, message);
      }
      assertLimitCoversBorrowed(request.amount, company, 'amount');
      company.creditLimit = request.amount;
      if (company.creditStatus === 'pending') company.creditStatus = 'active';
    });
  }
}
