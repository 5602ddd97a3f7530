import { Injectable } from '@nestjs/common';
import type { Actor } from '../../operators/index.js';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CallbackMessage } from '../../callbacks/index.js';
import { CallbackUrlValidator } from '../../egress/index.js';
import { DomainError, ErrorCode, notFound, parseMoney } from '../../platform/index.js';
import { assertLimitCoversBorrowed } from '../companies/credit.js';
import { CompanyLocks } from '../companies/company-locks.js';
import { Company } from '../companies/company.entity.js';
import {
  Changed,
  companyOfRow,
  DomainTransitions,
  partnersCompany,
  partnersParent,
} from '../domain/domain-transitions.js';
import { StatusResource } from '../domain/resource.js';
import { CreateLimitRequestDto } from './limit-request.dto.js';
import { LimitRequest } from './limit-request.entity.js';
import { LIMIT_REQUEST_TRANSITIONS, LimitRequestStatus } from './limit-request-status.js';

const LIMIT_REQUEST: StatusResource<LimitRequest, LimitRequestStatus> = {
  entity: LimitRequest,
  what: 'Limit request',
  tracked: ['status'],
  transitions: LIMIT_REQUEST_TRANSITIONS,
  statusChanged: (request, company) => ({
    message: CallbackMessage.LimitRequestStatusChanged,
    url: request.statusCallback,
    partnerId: company.partnerId,
    ids: { withdrawalId: null, companyId: company.id, limitRequestId: request.id, loanId: null },
  }),
};

export interface LimitRequestWithCompany {
  request: LimitRequest;
  company: Company;
}

const withCompany = ({ row, company }: Changed<LimitRequest>): LimitRequestWithCompany => ({ request: row, company });

@Injectable()
export class LimitRequestsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly locks: CompanyLocks,
    private readonly urls: CallbackUrlValidator,
    private readonly transitions: DomainTransitions,
  ) {}

  async create(partnerId: string, companyId: string, dto: CreateLimitRequestDto): Promise<LimitRequestWithCompany> {
    const statusCallback = await this.urls.check('status_callback', dto.status_callback);
    const { row: request, company } = await this.transitions.create<LimitRequest>(
      LimitRequest,
      partnersParent(partnerId, companyId),
      (company) => {
        if (company.creditStatus === 'closed') {
          throw new DomainError(
            'rule',
            ErrorCode.credit_closed,
            'The company credit is closed; no limit can be requested',
          );
        }
        return { companyId, amount: parseMoney(dto.amount)!, status: 'pending', statusCallback, updatedAt: new Date() };
      },
    );
    return { request, company };
  }

  async get(partnerId: string, companyId: string, id: string): Promise<LimitRequestWithCompany> {
    const company = await this.locks.find(this.db.manager, partnerId, companyId);
    const request = await this.db.manager.findOne(LimitRequest, { where: { id, companyId } });
    if (!request) throw notFound(LIMIT_REQUEST.what);
    return { request, company };
  }

  /** Partner cancellation. */
  cancel(partnerId: string, companyId: string, id: string): Promise<LimitRequestWithCompany> {
    return this.transitions
      .change({ resource: LIMIT_REQUEST, id, company: partnersCompany(partnerId, companyId), to: 'canceled' })
      .then(withCompany);
  }

  reject(actor: Actor, id: string): Promise<LimitRequestWithCompany> {
    return this.transitions
      .change({ resource: LIMIT_REQUEST, id, company: companyOfRow, to: 'rejected', actor })
      .then(withCompany);
  }

  /** Approval grants the requested amount as the credit limit and activates pending credit. */
  approve(actor: Actor, id: string): Promise<LimitRequestWithCompany> {
    return this.transitions
      .change({
        resource: LIMIT_REQUEST,
        id,
        company: companyOfRow,
        to: 'approved',
        actor,
        effects: (request, { company }) => {
          if (company.creditStatus === 'closed') {
            throw new DomainError(
              'rule',
              ErrorCode.credit_closed,
              'The company credit is closed; the limit request cannot be approved',
            );
          }
          assertLimitCoversBorrowed(request.amount, company, 'amount');
          company.creditLimit = request.amount;
          if (company.creditStatus === 'pending') company.creditStatus = 'active';
        },
      })
      .then(withCompany);
  }
}
