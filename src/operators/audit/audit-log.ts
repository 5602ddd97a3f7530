import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { invalidProperty, inWrite, type StatementPart } from '../../platform/index.js';
import type { Actor } from '../actor.js';
import { AUDIT_ACTIONS, AuditActionName, AuditTargetType } from './audit-actions.js';
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

const AUDIT_COLUMNS = 'operator_id, partner_id, partner_name, action, target_type, target_id, before, after';

/** The INSERT of one entry, for a place inside a change's own statement or transaction. */
export const AUDIT_INSERT =
  `INSERT INTO audit_entries (${AUDIT_COLUMNS}) ` + 'VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb)';

/** The array types of {@link AuditLog.rowsInsert}'s parameters: each entry's owner, then {@link auditValues}' eight. */
const AUDIT_ROW_TYPES = ['uuid', 'uuid', 'uuid', 'text', 'text', 'text', 'text', 'text', 'text'];

/** A change's entry (auditValues) written with a row of another table: that row's id is its owner. */
export interface OwnedAuditEntry {
  owner: string;
  values: unknown[];
}

/** The INSERT of several changes' entries (AuditLog.rowsInsert), its parameters numbered from `first`. */
function auditRowsInsert(first: number, owners: string): string {
  return (
    `INSERT INTO audit_entries (${AUDIT_COLUMNS})
       SELECT a.operator_id, a.partner_id, a.partner_name, a.action, a.target_type, a.target_id, ` +
    `a.before::jsonb, a.after::jsonb
         FROM unnest(${AUDIT_ROW_TYPES.map((type, i) => `$${first + i}::${type}[]`).join(', ')}) WITH ORDINALITY
              AS a(owner, ${AUDIT_COLUMNS}, ord)
        WHERE a.owner IN (${owners})
        ORDER BY ord`
  );
}

/** The parameters of {@link AUDIT_INSERT} for a change, only its changed properties kept. */
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

type Row = {
  seq: string;
  id: string;
  at: Date;
  operator_id: string | null;
  operator_name: string | null;
  partner_id: string | null;
  partner_name: string | null;
  action: string;
  target_type: string;
  target_id: string | null;
  before: TrackedProperties;
  after: TrackedProperties;
};

/**
 * The audit log: one entry per change made under /admin (and per partner's roll of its own
 * signing key, the partner its actor), written by the change itself inside its
 * transaction (so a change that is refused or fails writes none), read newest first. Entries are
 * never changed or deleted: no route does, and the table refuses UPDATE and DELETE.
 */
@Injectable()
export class AuditLog {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Writes the entry of a change inside the change's transaction. */
  async record(m: EntityManager, actor: Actor, change: AuditChange): Promise<void> {
    if (!inWrite(m))
      throw new Error('an audit entry is written inside the transaction of its change (TransactionRunner.transaction)');
    await m.query(AUDIT_INSERT, auditValues(actor, change));
  }

  /**
   * The INSERT of several changes' entries as a part of a larger statement that writes those
   * changes (funding's one-row writes: OneRowRepository): its parameters numbered from `first`, the
   * entries' owners and then each of {@link auditValues}' columns as an array; an entry is written
   * only when its owner is in `owners` (a subquery of the ids the statement wrote), in the order given.
   */
  rowsInsert(first: number, owners: string): StatementPart<OwnedAuditEntry[]> {
    return {
      text: auditRowsInsert(first, owners),
      next: first + AUDIT_ROW_TYPES.length,
      values: (entries) => [
        entries.map((e) => e.owner),
        ...AUDIT_ROW_TYPES.slice(1).map((_, i) => entries.map((e) => e.values[i])),
      ],
    };
  }

  async list(f: AuditFilter): Promise<{ items: AuditEntryView[]; nextCursor: string | null }> {
    const where: string[] = [];
    const values: unknown[] = [];
    const add = (sql: string, value: unknown) => {
      values.push(value);
      where.push(sql.replace('?', `$${values.length}`));
    };
    if (f.operatorId !== undefined) add('a.operator_id = ?', f.operatorId);
    if (f.targetType !== undefined) add('a.target_type = ?', f.targetType);
    if (f.targetId !== undefined) add('a.target_id = ?', f.targetId);
    if (f.since !== undefined) add('a.at >= ?', f.since);
    if (f.cursor !== undefined) add('a.seq < ?', decodeCursor(f.cursor));
    values.push(f.limit + 1);
    const rows: Row[] = await this.db.query(
      `SELECT a.seq::text AS seq, a.id, a.at, a.operator_id, o.name AS operator_name, a.partner_id, a.partner_name,
              a.action, a.target_type, a.target_id, a.before, a.after
         FROM audit_entries a LEFT JOIN operators o ON o.id = a.operator_id
        ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY a.seq DESC LIMIT $${values.length}`,
      values,
    );
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
