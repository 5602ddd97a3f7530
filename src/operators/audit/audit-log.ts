import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { invalidProperty, inWrite, type StatementPart } from '../../platform/index.js';
import type { Actor } from '../actor.js';
import { AUDIT_ACTIONS, AuditActionName, AuditTargetType } from './audit-actions.js';
import { AuditEntryRepository, OwnedAuditEntry } from './audit-entry.repository.js';

export type { OwnedAuditEntry };
import { changedProperties, TrackedProperties } from './audit-changes.js';

/** What a change says about itself; who made it and the action come with the Actor. */
export interface AuditChange {
  targetType: AuditTargetType;
  /** The resource's id (a destination's origin); null for a change of many (a bulk redelivery). */
  targetId: string | null;
  before: TrackedProperties;
  after: TrackedProperties;
}

export interface AuditFilter {
  operatorId?: string;
  targetType?: string;
  targetId?: string;
  since?: Date;
  limit: number;
  cursor?: string;
}

export interface AuditEntryView {
  id: string;
  at: string;
  /** Who made the change: an operator, or (its own signing key) a partner; the other is null. */
  operator: { id: string; name: string } | null;
  partner: { id: string; name: string } | null;
  action: string;
  targetType: string;
  targetId: string | null;
  before: TrackedProperties;
  after: TrackedProperties;
}

/** The parameters of an entry's INSERT (AuditEntryRepository.insert) for a change, only its changed properties kept. */
export function auditValues(actor: Actor, change: AuditChange): unknown[] {
  const expected = AUDIT_ACTIONS[actor.action as AuditActionName];
  if (expected !== change.targetType)
    throw new Error(`audit action ${actor.action} is not a change of a ${change.targetType}`);
  const { before, after } = changedProperties(change.before, change.after);
  const who = 'operator' in actor ? [actor.operator.id, null, null] : [null, actor.partner.id, actor.partner.name];
  return [...who, actor.action, change.targetType, change.targetId, JSON.stringify(before), JSON.stringify(after)];
}

const encodeCursor = (seq: string) => Buffer.from(`audit:${seq}`).toString('base64url');
function decodeCursor(cursor: string): string {
  const m = /^audit:([1-9]\d{0,17})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m || encodeCursor(m[1]) !== cursor) throw invalidProperty('cursor is not a cursor returned by this endpoint');
  return m[1];
}

/**
 * The audit log: one entry per change made under /admin (and per partner's roll of its own
 * signing key, the partner its actor), written by the change itself inside its
 * transaction (so a change that is refused or fails writes none), read newest first. Entries are
 * never changed or deleted: no route does, and the table refuses UPDATE and DELETE.
 */
@Injectable()
export class AuditLog {
  constructor(private readonly entries: AuditEntryRepository) {}

  /** Writes the entry of a change inside the change's transaction. */
  async record(m: EntityManager, actor: Actor, change: AuditChange): Promise<void> {
    if (!inWrite(m))
      throw new Error('an audit entry is written inside the transaction of its change (TransactionRunner.transaction)');
    await this.entries.insert(m, auditValues(actor, change));
  }

  /**
   * The INSERT of several changes' entries as a part of a larger statement that writes those
   * changes (funding's one-row writes: OneRowRepository): its parameters numbered from `first`, the
   * entries' owners and then each of {@link auditValues}' columns as an array; an entry is written
   * only when its owner is in `owners` (a subquery of the ids the statement wrote), in the order given.
   */
  rowsInsert(first: number, owners: string): StatementPart<OwnedAuditEntry[]> {
    return this.entries.rowsInsert(first, owners);
  }

  async list(f: AuditFilter): Promise<{ items: AuditEntryView[]; nextCursor: string | null }> {
    const { limit, cursor, ...conditions } = f;
    const beforeSeq = cursor === undefined ? undefined : decodeCursor(cursor);
    const rows = await this.entries.page({ ...conditions, beforeSeq }, limit + 1);
    const items = rows.slice(0, f.limit);
    return {
      items: items.map((r) => ({
        id: r.id,
        at: r.at.toISOString(),
        operator: r.operator_id === null ? null : { id: r.operator_id, name: r.operator_name! },
        partner: r.partner_id === null ? null : { id: r.partner_id, name: r.partner_name! },
        action: r.action,
        targetType: r.target_type,
        targetId: r.target_id,
        before: r.before,
        after: r.after,
      })),
      nextCursor: rows.length > f.limit ? encodeCursor(items[items.length - 1].seq) : null,
    };
  }
}

/** AuditLog and what it is made of, for a context that makes it outside the operators' module (funding's snapshots). */
export const AUDIT_LOG_PROVIDERS = [AuditLog, AuditEntryRepository];
