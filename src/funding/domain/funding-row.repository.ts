import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, DeepPartial, EntityManager, EntityTarget, FindOptionsWhere, ObjectLiteral } from 'typeorm';
import { Company } from './company.entity.js';
import type { CompanyRow } from './resource.js';

const FOR_UPDATE = { mode: 'pessimistic_write' } as const;

/**
 * Funding's statements TypeORM builds for its entities (companies, limit requests, withdrawals,
 * loans, payments), one method each, in the caller's transaction (`m`) or on the data source.
 * The one-row writes and the statements written by hand are other repositories'.
 */
@Injectable()
export class FundingRowRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** A company of this partner, unlocked. */
  company(m: EntityManager, partnerId: string, companyId: string): Promise<Company | null> {
    return m.findOne(Company, { where: { id: companyId, partnerId } });
  }

  /** A company of this partner, locked (`SELECT … FOR UPDATE`). */
  lockCompany(m: EntityManager, partnerId: string, companyId: string): Promise<Company | null> {
    return m.findOne(Company, { where: { id: companyId, partnerId }, lock: FOR_UPDATE });
  }

  /** A company by its id, locked; throws when it does not exist. */
  lockCompanyById(m: EntityManager, id: string): Promise<Company> {
    return m.findOneOrFail(Company, { where: { id }, lock: FOR_UPDATE });
  }

  /** A row of a company (limit request, withdrawal, loan) by its id alone, unlocked. */
  row<T extends CompanyRow>(m: EntityManager, entity: EntityTarget<T>, id: string): Promise<T | null> {
    return m.findOne(entity, { where: { id } as FindOptionsWhere<T> });
  }

  /** A row of this company, unlocked. */
  rowOfCompany<T extends CompanyRow>(
    m: EntityManager,
    entity: EntityTarget<T>,
    id: string,
    companyId: string,
  ): Promise<T | null> {
    return m.findOne(entity, { where: { id, companyId } as FindOptionsWhere<T> });
  }

  /** A row of this company, locked (`SELECT … FOR UPDATE`). */
  lockRowOfCompany<T extends CompanyRow>(
    m: EntityManager,
    entity: EntityTarget<T>,
    id: string,
    companyId: string,
  ): Promise<T | null> {
    return m.findOne(entity, { where: { id, companyId } as FindOptionsWhere<T>, lock: FOR_UPDATE });
  }

  /** A new row, as TypeORM saves one: returned with its id and the values the database gave it. */
  insert<T extends ObjectLiteral>(m: EntityManager, entity: EntityTarget<T>, values: DeepPartial<T>): Promise<T> {
    return m.save(m.create(entity, values));
  }

  /**
   * The partner's companies newest first, at most `limit`; with `name`, those whose name holds it
   * (any case, taken as text: `%` and `_` match themselves). One range of companies_partner_idx.
   */
  companiesOfPartner(partnerId: string, q: { name?: string; limit: number }): Promise<Company[]> {
    const b = this.db
      .getRepository(Company)
      .createQueryBuilder('c')
      .where('c.partner_id = :partnerId', { partnerId })
      .orderBy('c.created_at', 'DESC')
      .addOrderBy('c.id', 'DESC')
      .limit(q.limit);
    if (q.name) b.andWhere(`c.name ILIKE :pattern ESCAPE '\\'`, { pattern: `%${q.name.replace(/[\\%_]/g, '\\$&')}%` });
    return b.getMany();
  }
}
