import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { CallbackEvent, CallbackRecorder } from '../callbacks/callback-recorder.js';
import { CallbackMessage } from '../callbacks/callback-message.js';
import { CallbackUrlValidator } from '../callbacks/callback-url.validator.js';
import { DomainError, notFound } from '../common/domain-error.js';
import { formatMoney, parseMoney } from '../common/money.js';
import { canTransition } from '../common/state-machine.js';
import { writeBack } from '../common/transaction.js';
import { lockCompanyOf, ownedCompany } from '../companies/companies.service.js';
import { Company } from '../companies/company.entity.js';
import { creditEvents, creditSnapshot } from '../companies/credit.js';
import { CreateLimitRequestDto } from './limit-request.dto.js';
import { LimitRequest } from './limit-request.entity.js';
import { LIMIT_REQUEST_TRANSITIONS, LimitRequestStatus } from './limit-request-status.js';

@Injectable()
export class LimitRequestsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly urls: CallbackUrlValidator,
    private readonly callbacks: CallbackRecorder,
  ) {}

  async create(partnerId: string, companyId: string, dto: CreateLimitRequestDto): Promise<{ request: LimitRequest; company: Company }> {
    const statusCallback = await this.urls.check('status_callback', dto.status_callback);
    return this.db.transaction(async (m) => {
      const company = await ownedCompany(m, partnerId, companyId, true);
      if (company.creditStatus === 'closed') {
        throw new DomainError('rule', 'LIMIT_REQUEST.CREDIT_CLOSED', 'The company credit is closed; no limit can be requested');
      }
      const now = new Date();
      const request = await m.save(
        m.create(LimitRequest, { companyId, amount: parseMoney(dto.amount)!, status: 'pending', statusCallback, updatedAt: now }),
      );
      return { request, company };
    });
  }

  async get(partnerId: string, companyId: string, id: string): Promise<{ request: LimitRequest; company: Company }> {
    const company = await ownedCompany(this.db.manager, partnerId, companyId);
    const request = await this.db.manager.findOne(LimitRequest, { where: { id, companyId } });
    if (!request) throw notFound('Limit request');
    return { request, company };
  }

  /** Partner cancellation. */
  async cancel(partnerId: string, companyId: string, id: string) {
    return this.db.transaction(async (m) => {
      const company = await ownedCompany(m, partnerId, companyId, true);
      return this.transition(m, company, id, 'canceled', () => []);
    });
  }

  async reject(id: string) {
    return this.db.transaction(async (m) => this.transition(m, await lockCompanyOf(m, LimitRequest, id, 'Limit request'), id, 'rejected', () => []));
  }

  /** Approval grants the requested amount as the credit limit and activates pending credit. */
  async approve(id: string) {
    return this.db.transaction(async (m) => {
      const company = await lockCompanyOf(m, LimitRequest, id, 'Limit request');
      return this.transition(m, company, id, 'approved', (request) => {
        if (company.creditStatus === 'closed') {
          throw new DomainError('rule', 'LIMIT_REQUEST.CREDIT_CLOSED', 'The company credit is closed; the limit request cannot be approved');
        }
        if (request.amount < company.borrowedAmount) {
          throw new DomainError(
            'rule',
            'CREDIT.LIMIT_BELOW_BORROWED',
            `amount ${formatMoney(request.amount)} is below the borrowed amount ${formatMoney(company.borrowedAmount)}`,
          );
        }
        const before = creditSnapshot(company);
        company.creditLimit = request.amount;
        if (company.creditStatus === 'pending') company.creditStatus = 'active';
        return creditEvents(company, before);
      });
    });
  }


  private async transition(
    m: EntityManager,
    company: Company,
    id: string,
    to: LimitRequestStatus,
    effects: (request: LimitRequest) => CallbackEvent[],
  ): Promise<{ request: LimitRequest; company: Company }> {
    const request = await m.findOne(LimitRequest, { where: { id, companyId: company.id }, lock: { mode: 'pessimistic_write' } });
    if (!request) throw notFound('Limit request');
    if (!canTransition(LIMIT_REQUEST_TRANSITIONS, request.status, to)) {
      throw new DomainError('conflict', 'LIMIT_REQUEST.ILLEGAL_TRANSITION', `Limit request cannot become ${to}: its current status is ${request.status}`);
    }
    const companyEvents = effects(request);
    request.status = to;
    request.updatedAt = new Date();
    await writeBack(m, LimitRequest, request);
    if (companyEvents.length > 0) await writeBack(m, Company, company);
    // The acted-on resource's message first, then the company's (API.md §5 example: 3, 0, 2).
    await this.callbacks.record(m, [
      {
        message: CallbackMessage.LimitRequestStatusChanged,
        url: request.statusCallback,
        partnerId: company.partnerId,
        ids: { withdrawalId: null, companyId: company.id, limitRequestId: request.id, loanId: null },
      },
      ...companyEvents,
    ]);
    return { request, company };
  }
}
