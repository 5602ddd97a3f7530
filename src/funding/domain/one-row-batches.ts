import type { Pool } from 'pg';
import { DataSource, EntityMetadata, ObjectLiteral } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata.js';
import { Batcher, isDataError, SerialBatcher, updatableColumns } from '../../platform/index.js';
import { CALLBACK_PARAMS, CallbackEvent, callbackValues, withCallbackRows } from '../../callbacks/index.js';
import { auditRowsInsert, auditRowsValues } from '../../operators/index.js';

/** A row as read, with its version (`xmin`: every UPDATE gives the row a new one). */
export interface Versioned<T> {
  row: T;
  version: string;
}

/**
 * A changed row, to be written only over the version it was read at, the callbacks it calls for,
 * and its audit entry.
 */
export interface RowWrite<T> extends Versioned<T> {
  events: CallbackEvent[];
  /** The audit entry's parameters (auditValues), written with the row; null for a change that has none. */
  audit: unknown[] | null;
}

/** Rows read or written in one statement at most. */
const MAX_BATCH = 200;

/**
 * How a statement locks its rows. Together, it never waits: a row another transaction holds is
 * left out, and its change is written alone, waiting for that lock on a connection of its own (a
 * lock held for long stalls that row's changes only, not the batches behind it).
 */
const TOGETHER = 'FOR NO KEY UPDATE OF t SKIP LOCKED';
const ALONE = 'FOR NO KEY UPDATE OF t';

/** The callbacks' parameters start here (callbackValues), the audit entries' right after them (auditRowsValues). */
const CALLBACKS_FIRST = 4;
const AUDIT_FIRST = CALLBACKS_FIRST + CALLBACK_PARAMS;

/** A statement's text and the name it is prepared under. */
export type Sql = { name: string; text: string };

/** What became of a change in a batch: written, overtaken by another change of its row, or to be written alone. */
type Outcome = 'written' | 'overtaken' | 'alone';

/**
 * One table's rows for a change of one row (CompanyChanges), read and written in batches: the reads
 * asked for in one tick go in one statement, and the writes that gather while one is under way go
 * together in the next.
 * Each round trip costs PostgreSQL and this process tens of microseconds of system CPU whatever it
 * carries (docs/architecture.md, "API path"), and a batch commits once.
 *
 * A write statement writes each row only over the version read and inserts the callbacks of the
 * rows it wrote: each change is still all or nothing, its row and its callbacks in one statement.
 * A change whose row another transaction has locked, and every change of a statement PostgreSQL
 * refuses for a value or a constraint, is written alone, so only the change at fault fails.
 */
export class OneRowBatches<T extends ObjectLiteral & { id: string }> {
  private readonly reads = new Batcher<string, Versioned<T> | undefined>((ids) => this.readMany(ids), MAX_BATCH);
  private readonly writes = new SerialBatcher<RowWrite<T>, Outcome>((ws) => this.writeMany(ws), MAX_BATCH);

  private readonly columns: ColumnMetadata[];
  private readonly readSql: Sql;
  private readonly together: Sql;
  private readonly alone: Sql;

  constructor(
    private readonly db: DataSource,
    private readonly pool: Pool,
    private readonly meta: EntityMetadata,
  ) {
    this.columns = updatableColumns(meta);
    this.readSql = {
      name: `row-read-${meta.tableName}`,
      text: `SELECT xmin::text AS row_version, * FROM "${meta.tableName}" WHERE id = ANY($1::uuid[])`,
    };
    this.together = this.writeSql('together', TOGETHER);
    this.alone = this.writeSql('alone', ALONE);
  }

  /** Its statements, as prepared: the read, the write together and the write alone. */
  get statements(): Sql[] {
    return [this.readSql, this.together, this.alone];
  }

  read(id: string): Promise<Versioned<T> | undefined> {
    return this.reads.call(id);
  }

  /** Whether the row was written (with its callbacks); false when another change of it came first. */
  async write(w: RowWrite<T>): Promise<boolean> {
    const outcome = await this.writes.call(w);
    if (outcome === 'alone') return (await this.statement([w], this.alone)).written.has(w.row.id);
    return outcome === 'written';
  }

  private async readMany(ids: string[]): Promise<(Versioned<T> | undefined)[]> {
    const { rows } = await this.pool.query<Record<string, unknown> & { row_version: string }>({
      ...this.readSql,
      values: [ids],
    });
    const byId = new Map(rows.map((r) => [String(r.id).toLowerCase(), r]));
    return ids.map((id) => {
      const found = byId.get(id.toLowerCase());
      return found && { row: this.hydrate(found), version: found.row_version };
    });
  }

  /** An entity of a row as the driver returns it, through the columns' transformers. */
  private hydrate(raw: Record<string, unknown>): T {
    const row = this.meta.create() as T;
    for (const c of this.meta.columns)
      c.setEntityValue(row, this.db.driver.prepareHydratedValue(raw[c.databaseName], c));
    return row;
  }

  /**
   * One change per row in a statement: a second change of the same row read the same version, so
   * it is overtaken (read and decided again) rather than written over the first.
   */
  private async writeMany(ws: RowWrite<T>[]): Promise<Outcome[]> {
    const firsts = new Map<string, RowWrite<T>>();
    for (const w of ws) if (!firsts.has(w.row.id)) firsts.set(w.row.id, w);
    const first = (w: RowWrite<T>) => firsts.get(w.row.id) === w;
    let done: { written: Set<string>; locked: Set<string> };
    try {
      done = await this.statement([...firsts.values()], this.together);
    } catch (e) {
      if (!isDataError(e)) throw e;
      return ws.map((w) => (first(w) ? 'alone' : 'overtaken'));
    }
    return ws.map((w) =>
      !first(w)
        ? 'overtaken'
        : done.written.has(w.row.id)
          ? 'written'
          : done.locked.has(w.row.id)
            ? 'overtaken'
            : 'alone',
    );
  }

  /** The rows, each over its version, and the callbacks of those written; returns the ids written and those locked. */
  private async statement(ws: RowWrite<T>[], sql: Sql): Promise<{ written: Set<string>; locked: Set<string> }> {
    const values = ws.map((w) => {
      const value: Record<string, unknown> = { id: w.row.id };
      for (const c of this.columns)
        value[c.databaseName] = this.db.driver.preparePersistentValue(c.getEntityValue(w.row), c);
      return value;
    });
    const owners = ws.flatMap((w) => w.events.map(() => w.row.id));
    const callbacks = callbackValues(ws.flatMap((w) => w.events));
    const audit = auditRowsValues(ws.flatMap((w) => (w.audit ? [{ owner: w.row.id, values: w.audit }] : [])));
    const { rows } = await this.pool.query<{ id: string; written: boolean }>({
      ...sql,
      values: [JSON.stringify(values), ws.map((w) => w.version), owners, ...callbacks, ...audit],
    });
    return { written: new Set(rows.filter((r) => r.written).map((r) => r.id)), locked: new Set(rows.map((r) => r.id)) };
  }

  /**
   * The write statement, locking its rows `lock`. Parameters: the rows as JSON ($1), their versions
   * ($2), each callback's row ($3), the callbacks (callbackValues, from $4), then the audit entries
   * (the nine after those): a row, its callbacks and its audit entry are written together or not at all.
   */
  private writeSql(name: string, lock: string): Sql {
    const table = `"${this.meta.tableName}"`;
    return {
      name: `row-write-${this.meta.tableName}-${name}`,
      // A callback is inserted only with its row ($3 names each callback's row).
      text: withCallbackRows({
        before: `
        WITH input AS (
          SELECT r.*, ($2::text[])[r.ordinality::int]::xid AS row_version
            FROM json_populate_recordset(NULL::${table}, $1::json) WITH ORDINALITY AS r
        ), locked AS (
          -- The rows by primary-key probes (an array): joined to the input, a generic plan made while
          -- the table was small reads all of it (test/row-write-plans.e2e-spec.ts).
          SELECT t.id FROM ${table} t WHERE t.id = ANY (ARRAY(SELECT id FROM input)) ${lock}
        ), written AS (
          UPDATE ${table} t SET ${this.columns.map((c) => `"${c.databaseName}" = i."${c.databaseName}"`).join(', ')}
            FROM input i
           WHERE t.id = ANY (ARRAY(SELECT id FROM locked)) AND t.id = i.id AND t.xmin = i.row_version
          RETURNING t.id
        ), recorded AS (`,
        first: CALLBACKS_FIRST,
        owners: '$3',
        written: 'SELECT id FROM written',
        after: `
        ), audited AS (${auditRowsInsert(AUDIT_FIRST, 'SELECT id FROM written')})
        SELECT l.id, EXISTS (SELECT 1 FROM written w WHERE w.id = l.id) AS written FROM locked l`,
      }),
    };
  }
}
