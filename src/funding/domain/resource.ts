import { EntityTarget, ObjectLiteral } from 'typeorm';
import { CallbackEvent } from '../../callbacks/index.js';
import { assertStatusChange, Transitions } from '../../platform/index.js';
import { Company } from './company.entity.js';

/** A row the domain changes: it has an id. */
export type DomainRow = ObjectLiteral & { id: string };

/** A row under a company (limit request, withdrawal, loan): locked after its company. */
export type CompanyRow = DomainRow & { companyId: string };

/** What the transition template needs to know about one kind of row. */
export interface Resource<T extends DomainRow> {
  entity: EntityTarget<T>;
  /** Its name in refusals: `Limit request` → 404 "Limit request not found" (code `not_found`). */
  what: string;
  /** The properties a change reports before/after; the row is written back only when one of them changed. */
  tracked: readonly (keyof T & string)[];
}

export type StatusRow<S extends string> = CompanyRow & { status: S; updatedAt: Date };

/** A resource whose status moves along a state machine, each move recording the resource's own callback. */
export interface StatusResource<T extends StatusRow<S>, S extends string> extends Resource<T> {
  transitions: Transitions<S>;
  /** The callback of a status change, built after the change's effects (they may set ids it carries). */
  statusChanged(row: T, company: Company): CallbackEvent;
}

/** 409 naming the current status when the state machine forbids the move. */
export function assertTransition<T extends StatusRow<S>, S extends string>(
  resource: StatusResource<T, S>,
  row: T,
  to: S,
): void {
  assertStatusChange(resource.what, resource.transitions, row.status, to);
}

/** Moves a row's status (checked again) and returns the callback the move records. */
export function moveStatus<T extends StatusRow<S>, S extends string>(
  resource: StatusResource<T, S>,
  row: T,
  to: S,
  company: Company,
): CallbackEvent {
  assertTransition(resource, row, to);
  row.status = to;
  row.updatedAt = new Date();
  return resource.statusChanged(row, company);
}
