import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { StatementPart } from '../../platform/index.js';
import type { TrackedProperties } from './audit-changes.js';

const AUDIT_COLUMNS = 'operator_id, partner_id, partner_name, action, target_type, target_id, before, after';

/** The INSERT of one entry, for a place inside a change's own statement or transaction. */
const AUDIT_INSERT =
  `INSERT INTO audit_entries (${AUDIT_COLUMNS}) ` + 'VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb)';

/** The array types of {@link AuditEntryRepository.rowsInsert}'s parameters: each owner, then an entry's eight. */
const AUDIT_ROW_TYPES = ['uuid', 'uuid', 'uuid', 'text', 'text', 'text', 'text', 'text', 'text'];

/** A change's entry (auditValues) written with a row of another table: that row's id is its owner. */
export interface OwnedAuditEntry {
  owner: string;
  values: unknown[];
}

/** Which entries a page holds: each condition given narrows it; `beforeSeq` is the cursor's position. */
export interface AuditConditions {
  operatorId?: string;
  targetType?: string;
  targetId?: string;
  since?: Date;
  beforeSeq?: string;
}

export type AuditRow = {
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

/** The statements of audit_entries, one method each. */
@Injectable()
export class AuditEntryRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Writes one entry (its eight values: auditValues) inside the change's transaction. */
  async insert(m: EntityManager, values: unknown[]): Promise<void> {
    await m.query(AUDIT_INSERT, values);
  }

  /**
   * The INSERT of several changes' entries as a part of a larger statement that writes those
   * changes: its parameters numbered from `first`, the entries' owners and then each entry's
   * columns as an array; an entry is written only when its owner is in `owners`, in the order given.
   */
  rowsInsert(first: number, owners: string): StatementPart<OwnedAuditEntry[]> {
    return {
      text:
        `INSERT INTO audit_entries (${AUDIT_COLUMNS})
       SELECT a.operator_id, a.partner_id, a.partner_name, a.action, a.target_type, a.target_id, ` +
        `a.before::jsonb, a.after::jsonb
         FROM unnest(${AUDIT_ROW_TYPES.map((type, i) => `$${first + i}::${type}[]`).join(', ')}) WITH ORDINALITY
              AS a(owner, ${AUDIT_COLUMNS}, ord)
        WHERE a.owner IN (${owners})
        ORDER BY ord`,
      next: first + AUDIT_ROW_TYPES.length,
      values: (entries) => [
        entries.map((e) => e.owner),
        ...AUDIT_ROW_TYPES.slice(1).map((_, i) => entries.map((e) => e.values[i])),
      ],
    };
  }

  /** Up to `limit` entries meeting the conditions, newest first. */
  page(c: AuditConditions, limit: number): Promise<AuditRow[]> {
    const where: string[] = [];
    const values: unknown[] = [];
    const add = (sql: string, value: unknown) => {
      values.push(value);
      where.push(sql.replace('?', `$${values.length}`));
    };
    if (c.operatorId !== undefined) add('a.operator_id = ?', c.operatorId);
    if (c.targetType !== undefined) add('a.target_type = ?', c.targetType);
    if (c.targetId !== undefined) add('a.target_id = ?', c.targetId);
    if (c.since !== undefined) add('a.at >= ?', c.since);
    if (c.beforeSeq !== undefined) add('a.seq < ?', c.beforeSeq);
    values.push(limit);
    return this.db.query(
      `SELECT a.seq::text AS seq, a.id, a.at, a.operator_id, o.name AS operator_name, a.partner_id, a.partner_name,
              a.action, a.target_type, a.target_id, a.before, a.after
         FROM audit_entries a LEFT JOIN operators o ON o.id = a.operator_id
        ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY a.seq DESC LIMIT $${values.length}`,
      values,
    );
  }
}
