import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool } from 'pg';
import { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';
import { notFound, overtaken } from '../http/domain-error.js';
import { SqlPool } from '../database/sql-pool.js';
import { CallbackEvent, traced } from '../callbacks/callback-recorder.js';
import { Writes } from '../database/writes.js';
import { OneRowBatches } from './one-row-batches.js';
import { AuditChange, auditValues } from '../audit/audit-log.js';
import type { Actor } from '../operators/actor.js';

/** What an audited change decided: its callbacks, and what its audit entry says. */
export interface AuditedDecision {
  events: CallbackEvent[];
  change: AuditChange;
}

/** Reads of a row a change makes at most while other requests keep changing it, before it answers 409. */
const ROW_CHANGE_TRIES = 50;

/**
 * A change of one row and the callbacks it calls for, in two round trips to PostgreSQL, each
 * shared with the changes of other requests under way (OneRowBatches):
 * 1. the row is read, without a lock, with its version;
 * 2. `decide` changes it and names its callbacks, or throws a DomainError (nothing is written);
 * 3. one statement writes the row, only while it is still the version read, and inserts its
 *    callbacks: the change and its callbacks land together or not at all. A row another request
 *    changed in between is read and decided again.
 *
 * Why not BEGIN, SELECT … FOR UPDATE, UPDATE, INSERT, COMMIT: five round trips for each change,
 * and each costs PostgreSQL and this process tens of microseconds of system CPU (docs/architecture.md,
 * "API path"). Changes that span rows (a withdrawal and its company) still lock the company first
 * in a transaction (`lockCompanyOf`); this write waits for such a lock, and finds its version gone
 * if that transaction changed the row.
 */
@Injectable()
export class OneRowWrites {
  private readonly pool: Pool;
  private readonly tables = new Map<string, OneRowBatches<ObjectLiteral & { id: string }>>();

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly writes: Writes,
    sql: SqlPool,
  ) {
    this.pool = sql.pool;
  }

  apply<T extends ObjectLiteral & { id: string }>(entity: EntityTarget<T>, id: string, what: string, decide: (row: T) => CallbackEvent[]): Promise<T> {
    return this.write(entity, id, what, (row) => ({ events: decide(row), audit: null }));
  }

  /**
   * An operator's change: as {@link apply}, and its audit entry is written in the same statement
   * as the row and its callbacks (never for a refused change, whose `decide` throws).
   */
  applyAudited<T extends ObjectLiteral & { id: string }>(entity: EntityTarget<T>, id: string, what: string, actor: Actor, decide: (row: T) => AuditedDecision): Promise<T> {
    return this.write(entity, id, what, (row) => {
      const { events, change } = decide(row);
      return { events, audit: auditValues(actor, change) };
    });
  }

  private async write<T extends ObjectLiteral & { id: string }>(entity: EntityTarget<T>, id: string, what: string, decide: (row: T) => { events: CallbackEvent[]; audit: unknown[] | null }): Promise<T> {
    const rows = this.batchesOf(entity);
    for (let read = 1; ; read++) {
      const found = await rows.read(id);
      if (!found) throw notFound(what);
      const decided = decide(found.row);
      // The trace is taken here, in the request: the batched write runs in another request's.
      const events = traced(decided.events.filter((e) => e.url !== null));
      // One statement commits the row with its callbacks: the one write path's statement form.
      const written = await this.writes.statement(() => rows.write({ ...found, events, audit: decided.audit }), (ok) => (ok ? events.length : 0));
      if (written) return found.row;
      if (read === ROW_CHANGE_TRIES) throw overtaken(what, read);
    }
  }

  private batchesOf<T extends ObjectLiteral & { id: string }>(entity: EntityTarget<T>): OneRowBatches<T> {
    const meta = this.db.getMetadata(entity);
    let batches = this.tables.get(meta.tableName);
    if (!batches) this.tables.set(meta.tableName, (batches = new OneRowBatches(this.db, this.pool, meta)));
    return batches as unknown as OneRowBatches<T>;
  }
}
