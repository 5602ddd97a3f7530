import { Injectable } from '@nestjs/common';
import { DeepPartial, EntityManager, EntityTarget } from 'typeorm';
import { CallbackEvent, callbackOrigin, CallbackRecorder } from '../../callbacks/index.js';
import { CompanyLocks } from './company-locks.js';
import { Company } from './company.entity.js';
import { FundingRowRepository } from './funding-row.repository.js';
import { creditEvents, creditSnapshot } from './credit.js';
import { assertTransition, CompanyRow, DomainRow, Resource, StatusResource, StatusRow } from './resource.js';
import { RowChanges } from './tracked-changes.js';
import { ChangeSet } from './change-set.js';
import { CompanyChanges, CompanyChangeSpec } from './company-changes.js';
import { type Actor, AUDIT_ACTIONS, AuditActionName, AuditLog, rowChangesAudit } from '../../operators/index.js';
import { LockedRows, TransactionRunner } from '../../platform/index.js';
import { UrlMoveSpec, UrlMoves } from './url-moves.js';

/** The company named in a partner's path, when it is this partner's (else 404 `Company`). */
export type OwnedCompany = { partnerId: string; companyId: string };

/** An operator's change: the company owning the row (404 naming the resource when the row does not exist). */
export const companyOfRow = 'the company owning the row';

/**
 * How a change finds and locks its company (CompanyLocks): every path locks the company first,
 * then the company's rows.
 */
export type CompanyLock = OwnedCompany | typeof companyOfRow;

/** A partner's change: the company named in its path, when it is this partner's (else 404 `Company`). */
export const partnersCompany = (partnerId: string, companyId: string): CompanyLock => ({ partnerId, companyId });

/** How a create finds and locks the company it adds a row to: a partner's, named in its path. */
export type ParentLock = OwnedCompany;

/** A partner's create: the company named in its path, locked, when it is this partner's (else 404 `Company`). */
export const partnersParent = (partnerId: string, companyId: string): ParentLock => ({ partnerId, companyId });

/**
 * A change's own effects, run after the row is locked and its status move checked, before
 * anything is written: they may refuse (throw a DomainError: nothing is written), change the
 * row, the company and rows they lock through the ChangeSet, and return the callbacks of their
 * own (recorded after the resource's status callback, before the company's).
 */
export type Effects<T> = (row: T, change: ChangeSet) => CallbackEvent[] | void | Promise<CallbackEvent[] | void>;

export interface ChangeSpec<T extends DomainRow> {
  resource: Resource<T>;
  id: string;
  company: CompanyLock;
  effects?: Effects<T>;
  /**
   * The operator making the change (an /admin route): its audit entry is written with it. A partner's
   * change has none.
   */
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
 * The one model of every write of the domain's rows (companies, limit requests, withdrawals,
 * loans), each change in one transaction that commits its rows, its callbacks and its audit entry
 * together or not at all:
 * 1. lock the company, then the row (`SELECT … FOR UPDATE`, in that order on every path, so
 *    concurrent changes queue instead of deadlocking);
 * 2. check the state machine (409 naming the current status), before any side effect;
 * 3. apply the change's effects (its business rules; they may refuse with a DomainError);
 * 4. move the status, and write back each locked row whose tracked properties changed;
 * 5. record one callback per changed tracked property: the resource's own first, then the
 *    effects', then the company's (0 when limit, status or terms changed, 2 when the balance did:
 *    docs/partners.md, "The five messages"); the callbacks commit with the change or not at all.
 * 6. an operator's change writes its audit entry: the tracked properties that changed (`changes`).
 * A step that belongs to every change goes here, once. Creates lock the company they add to and
 * insert in their transaction; a change of a company's own credit takes the same steps in one
 * statement over the row's version (`changeCompany`, CompanyChanges: the API path's hot route).
 */
@Injectable()
export class DomainTransitions {
  constructor(
    private readonly callbacks: CallbackRecorder,
    private readonly audit: AuditLog,
    private readonly writes: TransactionRunner,
    private readonly companies: CompanyChanges,
    private readonly urlMoves: UrlMoves,
    private readonly locks: CompanyLocks,
    private readonly rows: LockedRows,
    private readonly funding: FundingRowRepository,
  ) {}

  /**
   * The transaction a change runs in (the one write path, TransactionRunner.transaction): the callbacks
   * `apply` records commit with it, and admission is woken once it has committed.
   */
  transaction<T>(work: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.writes.transaction(work);
  }

  /** {@link apply} in a transaction of its own. */
  change<T extends StatusRow<S>, S extends string>(spec: StatusChangeSpec<T, S>): Promise<Changed<T>>;
  change<T extends DomainRow>(spec: ChangeSpec<T>): Promise<Changed<T>>;
  change<T extends DomainRow>(spec: ChangeSpec<T>): Promise<Changed<T>> {
    return this.transaction((m) => this.apply(m, spec));
  }

  /** A new company, inserted in a transaction of its own (it has no callbacks: nothing tracked changed). */
  createCompany(values: DeepPartial<Company>): Promise<Company> {
    return this.transaction((m) => this.funding.insert(m, Company, values));
  }

  /**
   * A new row of a company (a limit request, a withdrawal), in a transaction of its own: the
   * company locked first, then `build` checks the rules (it may refuse with a DomainError) and
   * gives the row's values.
   */
  create<T extends CompanyRow>(
    entity: EntityTarget<T>,
    company: ParentLock,
    build: (company: Company) => DeepPartial<T>,
  ): Promise<{ row: T; company: Company }> {
    return this.transaction(async (m) => {
      const parent = await this.locks.lockOwned(m, company.partnerId, company.companyId);
      const row = await this.funding.insert(m, entity, build(parent));
      return { row, company: parent };
    });
  }

  /**
   * A partner's move of one URL to another across its resources, in one transaction: the companies
   * locked first (in id order), then their rows, each changed as its own PATCH changes it
   * (url-moves.ts). No tracked property changes: no callback is recorded. An operator moving it in
   * the partner's portal (`actor`) is audited: the two URLs' origins, never a path or query.
   */
  moveUrl(spec: UrlMoveSpec, actor?: Actor): Promise<number> {
    return this.transaction(async (m) => {
      const moved = await this.urlMoves.moveUrlIn(m, spec);
      if (actor) {
        const after = { fromOrigin: callbackOrigin(spec.from), toOrigin: callbackOrigin(spec.to), resources: moved };
        await this.audit.record(m, actor, { targetType: 'partner', targetId: spec.partnerId, before: {}, after });
      }
      return moved;
    });
  }

  /** A change of a company's own credit, steps 3 to 6 in one statement over the row's version (CompanyChanges). */
  changeCompany(spec: CompanyChangeSpec): Promise<Company> {
    return this.companies.apply(spec);
  }

  apply<T extends StatusRow<S>, S extends string>(m: EntityManager, spec: StatusChangeSpec<T, S>): Promise<Changed<T>>;
  apply<T extends DomainRow>(m: EntityManager, spec: ChangeSpec<T>): Promise<Changed<T>>;
  async apply<T extends DomainRow>(m: EntityManager, spec: ChangeSpec<T> & { to?: string }): Promise<Changed<T>> {
    const status = spec.to === undefined ? null : (spec as unknown as StatusChangeSpec<StatusRow<string>, string>);
    const resource = spec.resource as unknown as Resource<CompanyRow>;
    const company =
      spec.company === companyOfRow
        ? await this.locks.lockOf(m, resource.entity, spec.id, resource.what)
        : await this.locks.lockOwned(m, spec.company.partnerId, spec.company.companyId);
    const change = new ChangeSet(m, company, this.rows, this.funding);
    const creditBefore = creditSnapshot(company);
    // A change of the company itself holds the row it locked first; any other locks its row after it.
    const row =
      spec.resource.entity === Company
        ? change.hold(spec.resource, company as unknown as T)
        : ((await change.lock(spec.resource as unknown as Resource<CompanyRow>, spec.id)) as unknown as T);
    if (status) assertTransition(status.resource, row as unknown as StatusRow<string>, status.to);
    const effects = (await spec.effects?.(row, change)) ?? [];
    const own = status ? [change.move(status.resource, row as unknown as StatusRow<string>, status.to)] : [];
    const events = [...own, ...effects, ...creditEvents(company, creditBefore)];
    const changes = await change.write();
    await this.callbacks.record(m, events);
    if (spec.actor) {
      const { before, after } = rowChangesAudit(spec.id, changes);
      await this.audit.record(m, spec.actor, {
        targetType: AUDIT_ACTIONS[spec.actor.action as AuditActionName],
        targetId: spec.id,
        before,
        after,
      });
    }
    return { row, company, changes };
  }
}
