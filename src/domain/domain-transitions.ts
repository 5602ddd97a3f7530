import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { CallbackEvent, CallbackRecorder } from '../callbacks/callback-recorder.js';
import { notFound } from '../http/domain-error.js';
import { writeBack } from '../common/transaction.js';
import { lockCompanyOf, lockOwnedCompany } from '../companies/company-locks.js';
import { Company } from '../companies/company.entity.js';
import { CREDIT_PROPERTIES, creditEvents, creditSnapshot } from '../companies/credit.js';
import { assertTransition, CompanyRow, DomainRow, moveStatus, Resource, StatusResource, StatusRow } from './resource.js';
import { changesOf, RowChanges, snapshot, Snapshot } from './tracked-changes.js';
import { AUDIT_ACTIONS, AuditActionName } from '../audit/audit-actions.js';
import { rowChangesAudit } from '../audit/audit-changes.js';
import { Writes } from '../database/writes.js';
import { AuditLog } from '../audit/audit-log.js';
import type { Actor } from '../operators/actor.js';

/** How a change finds and locks its company: every path locks the company first, then the company's rows. */
export type CompanyLock = (m: EntityManager, resource: Resource<CompanyRow>, id: string) => Promise<Company>;

/** A partner's change: the company named in its path, when it is this partner's (else 404 `Company`). */
export const partnersCompany =
  (partnerId: string, companyId: string): CompanyLock =>
  (m) =>
    lockOwnedCompany(m, partnerId, companyId);

/** An operator's change: the company owning the row (404 naming the resource when the row does not exist). */
export const companyOfRow: CompanyLock = (m, resource, id) => lockCompanyOf(m, resource.entity, id, resource.what);

const COMPANY: Resource<Company> = { entity: Company, what: 'Company', tracked: CREDIT_PROPERTIES };

/** The rows one change holds locked; each is written back once, at the end, when a tracked property changed. */
export class ChangeSet {
  private readonly held: { resource: Resource<DomainRow>; row: DomainRow; before: Snapshot }[] = [];

  constructor(
    private readonly m: EntityManager,
    readonly company: Company,
  ) {
    this.track(COMPANY, company);
  }

  /** Locks (`SELECT … FOR UPDATE`) a row of this change's company and tracks it; 404 naming the resource when absent. */
  async lock<T extends CompanyRow>(resource: Resource<T>, id: string): Promise<T> {
    const row = await this.m.findOne(resource.entity, { where: { id, companyId: this.company.id } as never, lock: { mode: 'pessimistic_write' } });
    if (!row) throw notFound(resource.what);
    return this.track(resource, row);
  }

  /** Moves a held row's status along its state machine; returns the callback the move records. */
  move<T extends StatusRow<S>, S extends string>(resource: StatusResource<T, S>, row: T, to: S): CallbackEvent {
    return moveStatus(resource, row, to, this.company);
  }

  /** Writes back each held row whose tracked properties changed; returns those changes, in the order the rows were locked. */
  async write(): Promise<RowChanges[]> {
    const changes: RowChanges[] = [];
    for (const { resource, row, before } of this.held) {
      const changed = changesOf(this.m.connection.getMetadata(resource.entity).tableName, row.id, before, snapshot(row, resource.tracked));
      if (!changed) continue;
      await writeBack(this.m, resource.entity, row);
      changes.push(changed);
    }
    return changes;
  }

  private track<T extends DomainRow>(resource: Resource<T>, row: T): T {
    this.held.push({ resource: resource as unknown as Resource<DomainRow>, row, before: snapshot(row, resource.tracked) });
    return row;
  }
}

/**
 * A change's own effects, run after the row is locked and its status move checked, before
 * anything is written: they may refuse (throw a DomainError: nothing is written), change the
 * row, the company and rows they lock through the ChangeSet, and return the callbacks of their
 * own (recorded after the resource's status callback, before the company's).
 */
export type Effects<T> = (row: T, change: ChangeSet) => CallbackEvent[] | void | Promise<CallbackEvent[] | void>;

export interface ChangeSpec<T extends CompanyRow> {
  resource: Resource<T>;
  id: string;
  company: CompanyLock;
  effects?: Effects<T>;
  /** The operator making the change (an /admin route): its audit entry is written with it. A partner's change has none. */
  actor?: Actor;
}

export interface StatusChangeSpec<T extends StatusRow<S>, S extends string> extends ChangeSpec<T> {
  resource: StatusResource<T, S>;
  /** The status asked for: checked against the state machine before any effect; its callback is recorded first. */
  to: S;
}

export interface Changed<T> {
  row: T;
  company: Company;
  /** What the change did, row by row: the tracked properties that changed, before and after. */
  changes: RowChanges[];
}

/**
 * The one template every change of the domain's rows follows, inside the caller's transaction:
 * 1. lock the company, then the row (`SELECT … FOR UPDATE`, in that order on every path, so
 *    concurrent changes queue instead of deadlocking);
 * 2. check the state machine (409 naming the current status), before any side effect;
 * 3. apply the change's effects (its business rules; they may refuse with a DomainError);
 * 4. move the status, and write back each locked row whose tracked properties changed;
 * 5. record one callback per changed tracked property: the resource's own first, then the
 *    effects', then the company's (0 when limit, status or terms changed, 2 when the balance did:
 *    docs/partners.md, "The five messages"); the callbacks commit with the change or not at all.
 * 6. an operator's change writes its audit entry: the tracked properties that changed (`changes`).
 * A step that belongs to every change goes here, once.
 */
@Injectable()
export class DomainTransitions {
  constructor(
    private readonly callbacks: CallbackRecorder,
    private readonly audit: AuditLog,
    private readonly writes: Writes,
  ) {}

  /**
   * The transaction a change runs in (the one write path, Writes.transaction): the callbacks
   * `apply` records commit with it, and admission is woken once it has committed.
   */
  transaction<T>(work: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.writes.transaction(work);
  }

  apply<T extends StatusRow<S>, S extends string>(m: EntityManager, spec: StatusChangeSpec<T, S>): Promise<Changed<T>>;
  apply<T extends CompanyRow>(m: EntityManager, spec: ChangeSpec<T>): Promise<Changed<T>>;
  async apply<T extends CompanyRow>(m: EntityManager, spec: ChangeSpec<T> & { to?: string }): Promise<Changed<T>> {
    const status = spec.to === undefined ? null : (spec as unknown as StatusChangeSpec<StatusRow<string>, string>);
    const company = await spec.company(m, spec.resource as unknown as Resource<CompanyRow>, spec.id);
    const change = new ChangeSet(m, company);
    const creditBefore = creditSnapshot(company);
    const row = await change.lock(spec.resource, spec.id);
    if (status) assertTransition(status.resource, row as unknown as StatusRow<string>, status.to);
    const effects = (await spec.effects?.(row, change)) ?? [];
    const own = status ? [change.move(status.resource, row as unknown as StatusRow<string>, status.to)] : [];
    const events = [...own, ...effects, ...creditEvents(company, creditBefore)];
    const changes = await change.write();
    await this.callbacks.record(m, events);
    if (spec.actor) {
      const { before, after } = rowChangesAudit(spec.id, changes);
      await this.audit.record(m, spec.actor, { targetType: AUDIT_ACTIONS[spec.actor.action as AuditActionName], targetId: spec.id, before, after });
    }
    return { row, company, changes };
  }
}
