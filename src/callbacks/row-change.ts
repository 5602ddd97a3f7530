import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool, QueryConfig } from 'pg';
import { DataSource, EntityMetadata, EntityTarget, ObjectLiteral } from 'typeorm';
import { notFound, overtaken } from '../common/domain-error.js';
import { updatableColumns } from '../common/transaction.js';
import { rawPool } from '../database/database.js';
import { AdmissionSignal } from '../delivery/admission-signal.js';
import { CallbackEvent, callbackRows } from './callback-recorder.js';

/** Reads of a row a change makes at most while other requests keep changing it, before it answers 409. */
const ROW_CHANGE_TRIES = 50;

/**
 * A change of one row and the callbacks it calls for, in two round trips to PostgreSQL:
 * 1. the row is read, without a lock, with its version (`xmin`: every UPDATE gives the row a new one);
 * 2. `decide` changes it and names its callbacks, or throws a DomainError (nothing is written);
 * 3. one statement writes the row, only while it is still the version read, and inserts its
 *    callbacks. A statement commits alone: the change and its callbacks land together or not at
 *    all. A row another request changed in between is read and decided again.
 *
 * Why not BEGIN, SELECT … FOR UPDATE, UPDATE, INSERT, COMMIT: five round trips, and each costs
 * PostgreSQL and this process tens of microseconds of system CPU (docs/architecture.md, "API
 * path"). Changes that span rows (a withdrawal and its company) still lock the company first in a
 * transaction (`lockCompanyOf`); this write waits for such a lock, and finds its version gone if
 * that transaction changed the row.
 */
@Injectable()
export class RowChange {
  private readonly pool: Pool;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly signal: AdmissionSignal,
  ) {
    this.pool = rawPool(db);
  }

  async apply<T extends ObjectLiteral & { id: string }>(entity: EntityTarget<T>, id: string, what: string, decide: (row: T) => CallbackEvent[]): Promise<T> {
    const meta = this.db.getMetadata(entity);
    for (let read = 1; ; read++) {
      const found = await this.read<T>(meta, id);
      if (!found) throw notFound(what);
      const { row, version } = found;
      const events = decide(row).filter((e) => e.url !== null);
      const { rows } = await this.pool.query<{ written: boolean }>(this.write(meta, row, version, events));
      if (rows[0].written) {
        if (events.length > 0) this.signal.wake();
        return row;
      }
      if (read === ROW_CHANGE_TRIES) throw overtaken(what, read);
    }
  }

  /** The row with its version, by a prepared statement (a query builder's SQL is parsed and planned anew each time). */
  private async read<T extends ObjectLiteral>(meta: EntityMetadata, id: string): Promise<{ row: T; version: string } | null> {
    const { rows } = await this.pool.query({ name: `row-read-${meta.tableName}`, text: `SELECT xmin::text AS row_version, * FROM "${meta.tableName}" WHERE id = $1`, values: [id] });
    if (rows.length === 0) return null;
    const row = meta.create() as T;
    for (const c of meta.columns) c.setEntityValue(row, this.db.driver.prepareHydratedValue(rows[0][c.databaseName], c));
    return { row, version: rows[0].row_version };
  }

  /** The row's columns, written only over `version`, and its callbacks, written only with it. */
  private write<T extends ObjectLiteral & { id: string }>(meta: EntityMetadata, row: T, version: string, events: CallbackEvent[]): QueryConfig {
    const columns = updatableColumns(meta);
    const insert = callbackRows(events, columns.length + 3, 'EXISTS (SELECT 1 FROM written)');
    return {
      name: `row-change-${meta.tableName}`,
      text: `
        WITH written AS (
          UPDATE "${meta.tableName}" SET ${columns.map((c, i) => `"${c.databaseName}" = $${i + 3}`).join(', ')}
           WHERE id = $1 AND xmin = $2::xid RETURNING id
        ), recorded AS (${insert.text})
        SELECT EXISTS (SELECT 1 FROM written) AS written`,
      values: [row.id, version, ...columns.map((c) => this.db.driver.preparePersistentValue(c.getEntityValue(row), c)), ...insert.values],
    };
  }
}
