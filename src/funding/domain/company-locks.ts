import { Injectable } from '@nestjs/common';
import { EntityManager, EntityTarget } from 'typeorm';
import { notFound } from '../../platform/index.js';
import { Company } from './company.entity.js';
import { FundingRowRepository } from './funding-row.repository.js';

/*
 * How the domain finds and locks a company. Every path that touches a company and its children
 * (limit requests, withdrawals, loans) locks the company first, so concurrent changes queue
 * instead of deadlocking.
 */

/** The company reads and locks every change starts with, in the caller's transaction (FundingRowRepository's). */
@Injectable()
export class CompanyLocks {
  constructor(private readonly rows: FundingRowRepository) {}

  /**
   * A company of this partner, read without a lock; another partner's company is indistinguishable
   * from a missing one.
   */
  async find(m: EntityManager, partnerId: string, companyId: string): Promise<Company> {
    const company = await this.rows.company(m, partnerId, companyId);
    if (!company) throw notFound('Company');
    return company;
  }

  /** A company of this partner, locked (`SELECT … FOR UPDATE`); 404 as `find`. */
  async lockOwned(m: EntityManager, partnerId: string, companyId: string): Promise<Company> {
    const company = await this.rows.lockCompany(m, partnerId, companyId);
    if (!company) throw notFound('Company');
    return company;
  }

  /**
   * Locks the company owning a child row (limit request, withdrawal, loan); 404 naming the child
   * when it does not exist.
   */
  async lockOf(
    m: EntityManager,
    child: EntityTarget<{ id: string; companyId: string }>,
    id: string,
    what: string,
  ): Promise<Company> {
    const found = await this.rows.row(m, child, id);
    if (!found) throw notFound(what);
    return this.rows.lockCompanyById(m, found.companyId);
  }
}
