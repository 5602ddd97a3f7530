import { DeepPartial, EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import { CallbackEvent } from '../../callbacks/index.js';
import { LockedRows, notFound } from '../../platform/index.js';
import { Company } from './company.entity.js';
import type { FundingRowRepository } from './funding-row.repository.js';
import { CREDIT_PROPERTIES } from './credit.js';
import { CompanyRow, DomainRow, moveStatus, Resource, StatusResource, StatusRow } from './resource.js';
import { changesOf, RowChanges, snapshot, Snapshot } from './tracked-changes.js';

/** The company as a change tracks it: its credit properties decide the company's callbacks. */
export const COMPANY: Resource<Company> = { entity: Company, what: 'Company', tracked: CREDIT_PROPERTIES };

/** The rows one change holds locked; each is written back once, at the end, when a tracked property changed. */
export class ChangeSet {
  private readonly held: { resource: Resource<DomainRow>; row: DomainRow; before: Snapshot }[] = [];

  constructor(
    private readonly m: EntityManager,
    readonly company: Company,
    private readonly rows: LockedRows,
    private readonly funding: FundingRowRepository,
  ) {
    this.track(COMPANY, company);
  }

  /**
   * Locks (`SELECT … FOR UPDATE`) a row of this change's company and tracks it; 404 naming the
   * resource when absent.
   */
  async lock<T extends CompanyRow>(resource: Resource<T>, id: string): Promise<T> {
    const row = await this.funding.lockRowOfCompany(this.m, resource.entity, id, this.company.id);
    if (!row) throw notFound(resource.what);
    return this.track(resource, row);
  }

  /**
   * Tracks the properties `resource` names of a row the change already holds (the company, for a
   * change of its own).
   */
  hold<T extends DomainRow>(resource: Resource<T>, row: T): T {
    return this.track(resource, row);
  }

  /** Inserts a new row in the change's transaction (a loan, a payment); returns it with its id. */
  insert<T extends ObjectLiteral>(entity: EntityTarget<T>, values: DeepPartial<T>): Promise<T> {
    return this.funding.insert(this.m, entity, values);
  }

  /** Runs a statement of the change's own in its transaction (the callback store's move of a URL). */
  run<R>(statement: (m: EntityManager) => Promise<R>): Promise<R> {
    return statement(this.m);
  }

  /** Moves a held row's status along its state machine; returns the callback the move records. */
  move<T extends StatusRow<S>, S extends string>(resource: StatusResource<T, S>, row: T, to: S): CallbackEvent {
    return moveStatus(resource, row, to, this.company);
  }

  /**
   * Writes back each held row whose tracked properties changed; returns those changes, in the order
   * the rows were locked.
   */
  async write(): Promise<RowChanges[]> {
    const changes: RowChanges[] = [];
    for (const { resource, row, before } of this.held) {
      const changed = changesOf(
        this.m.connection.getMetadata(resource.entity).tableName,
        row.id,
        before,
        snapshot(row, resource.tracked),
      );
      if (!changed) continue;
      await this.rows.writeBack(this.m, resource.entity, row);
      changes.push(changed);
    }
    return changes;
  }

  private track<T extends DomainRow>(resource: Resource<T>, row: T): T {
    this.held.push({ resource, row, before: snapshot(row, resource.tracked) });
    return row;
  }
}
