import { Inject } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DeepPartial } from 'typeorm';
import { DataSource } from 'typeorm';
import { CallbackUrlValidator } from '../../egress/index.js';
import type { Actor } from '../../operators/index.js';
import { notFound } from '../../platform/index.js';
import { CompanyLocks } from '../domain/company-locks.js';
import { FundingRowRepository } from '../domain/funding-row.repository.js';
import { Company } from '../domain/company.entity.js';
import {
  companyOfRow,
  DomainTransitions,
  Effects,
  partnersCompany,
  partnersParent,
  StatusChangeSpec,
} from '../domain/domain-transitions.js';
import { StatusResource, StatusRow } from '../domain/resource.js';

/** A company's request as its views show it: the row, with the company it belongs to (for its currency). */
export interface OfCompany<T> {
  row: T;
  company: Company;
}

/**
 * A kind of company request as the transition template sees it, with the statuses a partner's
 * cancellation and an operator's rejection move it to (spelled as its specification spells them:
 * `canceled` for limit requests, `cancelled` for withdrawals).
 */
export interface RequestResource<T extends StatusRow<S>, S extends string> extends StatusResource<T, S> {
  cancelled: S;
  rejected: S;
}

/**
 * What a company's requests (limit requests, withdrawals) have in common: a partner opens one
 * under its company, reads it and cancels it; an operator rejects it or moves it on with effects
 * of its own kind. Every change is one transition of the domain's one model (DomainTransitions).
 * A subclass says only its resource, what opening one checks and its own moves;
 * what they all use is injected here, into properties (Nest's way for a base class), so a
 * subclass passes nothing up.
 */
export abstract class CompanyRequests<T extends StatusRow<S>, S extends string> {
  @InjectDataSource() private readonly db: DataSource;
  @Inject(DomainTransitions) private readonly transitions: DomainTransitions;
  @Inject(CompanyLocks) private readonly locks: CompanyLocks;
  @Inject(FundingRowRepository) private readonly rows: FundingRowRepository;
  @Inject(CallbackUrlValidator) protected readonly urls: CallbackUrlValidator;

  protected abstract readonly resource: RequestResource<T, S>;

  /** A request of this partner's company; 404 naming the company or the request when either is not the partner's. */
  async get(partnerId: string, companyId: string, id: string): Promise<OfCompany<T>> {
    const company = await this.locks.find(this.db.manager, partnerId, companyId);
    const row = await this.rows.rowOfCompany(this.db.manager, this.resource.entity, id, companyId);
    if (!row) throw notFound(this.resource.what);
    return { row, company };
  }

  /** The partner's cancellation. */
  cancel(partnerId: string, companyId: string, id: string): Promise<OfCompany<T>> {
    return this.move({ id, company: partnersCompany(partnerId, companyId), to: this.resource.cancelled });
  }

  /** An operator's rejection. */
  reject(actor: Actor, id: string): Promise<OfCompany<T>> {
    return this.move({ id, company: companyOfRow, to: this.resource.rejected, actor });
  }

  /** A new request under the partner's company, locked first; `build` checks the rules and gives its values. */
  protected open(
    partnerId: string,
    companyId: string,
    build: (company: Company) => DeepPartial<T>,
  ): Promise<OfCompany<T>> {
    return this.transitions.create(this.resource.entity, partnersParent(partnerId, companyId), build);
  }

  /** An operator's move of a request to `to`, after the move's own effects. */
  protected operatorMove(actor: Actor, id: string, to: S, effects: Effects<T>): Promise<OfCompany<T>> {
    return this.move({ id, company: companyOfRow, to, actor, effects });
  }

  private move(spec: Omit<StatusChangeSpec<T, S>, 'resource'>): Promise<OfCompany<T>> {
    return this.transitions.change<T, S>({ ...spec, resource: this.resource });
  }
}
