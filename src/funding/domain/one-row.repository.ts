import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityMetadata, ObjectLiteral } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata.js';
import { type CallbackEvent, CallbackInserts } from '../../callbacks/index.js';
import { AuditLog, type OwnedAuditEntry } from '../../operators/index.js';
import { SqlPool, type StatementPart, updatableColumns } from '../../platform/index.js';

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

/**
 * How a write locks its rows. Together, it never waits: a row another transaction holds is left
 * out, and its change is written alone, waiting for that lock on a connection of its own (a lock
 * held for long stalls that row's changes only, not the batches behind it: OneRowBatches).
 */
export type Lock = 'together' | 'alone';
const LOCKS: Record<Lock, string> = { together: 'FOR NO KEY UPDATE OF t SKIP LOCKED', alone: 'FOR NO KEY UPDATE OF t' };

/** A statement's text and the name it is prepared under. */
export type Sql = { name: string; text: string };

/** The ids a write wrote, and those it locked (written or found at another version). */
export interface Written {
  written: Set<string>;
  locked: Set<string>;
}

/**
 * The write's own parameters: the rows as JSON ($1), their versions ($2), each callback's row
 * ($3). The parts other repositories own (the callbacks', the audit entries') are numbered after them.
 */
const OWN_PARAMS = 3;

/** The relation of the rows a write wrote, which its callbacks and audit entries are inserted with. */
const WRITTEN = 'SELECT id FROM written';

/** A table's statements, built once: each is prepared by name on SqlPool's connections. */
interface TableStatements {
  columns: ColumnMetadata[];
  read: Sql;
  writes: Record<Lock, Sql>;
  callbacks: StatementPart<CallbackEvent[]>;
  audit: StatementPart<OwnedAuditEntry[]>;
}

/**
 * The statements of funding's one-row changes (OneRowBatches), for any of its tables: a read of
 * rows with their versions, and a write of rows, each over its version, with the callbacks
 * (CallbackInserts' part) and the audit entries (AuditLog's part) of the rows it wrote, in one
 * statement: a row, its callbacks and its audit entry are written together or not at all.
 * Its statements are snapshotted (domain/snapshots.ts) and their plans checked
 * (test/row-write-plans.e2e-spec.ts).
 */
@Injectable()
export class OneRowRepository {
  private readonly tables = new Map<EntityMetadata, TableStatements>();

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly sql: SqlPool,
    private readonly callbacks: CallbackInserts,
    private readonly audit: AuditLog,
  ) {}

  /** A table's statements, as prepared: the read, the write together and the write alone. */
  statements(meta: EntityMetadata): Sql[] {
    const t = this.of(meta);
    return [t.read, t.writes.together, t.writes.alone];
  }

  /** The rows of `ids` with their versions, in the order of the ids (undefined for an id not found). */
  async read<T extends ObjectLiteral>(meta: EntityMetadata, ids: string[]): Promise<(Versioned<T> | undefined)[]> {
    const { rows } = await this.sql.pool.query<Record<string, unknown> & { row_version: string }>({
      ...this.of(meta).read,
      values: [ids],
    });
    const byId = new Map(rows.map((r) => [String(r.id).toLowerCase(), r]));
    return ids.map((id) => {
      const found = byId.get(id.toLowerCase());
      return found && { row: this.hydrate<T>(meta, found), version: found.row_version };
    });
  }

  /** The rows, each over its version, and the callbacks and audit entries of those written. */
  async write<T extends ObjectLiteral & { id: string }>(
    meta: EntityMetadata,
    ws: RowWrite<T>[],
    lock: Lock,
  ): Promise<Written> {
    const t = this.of(meta);
    const values = ws.map((w) => {
      const value: Record<string, unknown> = { id: w.row.id };
      for (const c of t.columns)
        value[c.databaseName] = this.db.driver.preparePersistentValue(c.getEntityValue(w.row), c);
      return value;
    });
    const owners = ws.flatMap((w) => w.events.map(() => w.row.id));
    const { rows } = await this.sql.pool.query<{ id: string; written: boolean }>({
      ...t.writes[lock],
      values: [
        JSON.stringify(values),
        ws.map((w) => w.version),
        owners,
        ...t.callbacks.values(ws.flatMap((w) => w.events)),
        ...t.audit.values(ws.flatMap((w) => (w.audit ? [{ owner: w.row.id, values: w.audit }] : []))),
      ],
    });
    return { written: new Set(rows.filter((r) => r.written).map((r) => r.id)), locked: new Set(rows.map((r) => r.id)) };
  }

  /** An entity of a row as the driver returns it, through the columns' transformers. */
  private hydrate<T extends ObjectLiteral>(meta: EntityMetadata, raw: Record<string, unknown>): T {
    const row = meta.create() as T;
    for (const c of meta.columns) c.setEntityValue(row, this.db.driver.prepareHydratedValue(raw[c.databaseName], c));
    return row;
  }

  private of(meta: EntityMetadata): TableStatements {
    let t = this.tables.get(meta);
    if (!t) this.tables.set(meta, (t = this.build(meta)));
    return t;
  }

  private build(meta: EntityMetadata): TableStatements {
    const columns = updatableColumns(meta);
    const table = `"${meta.tableName}"`;
    // A callback is inserted only with its row ($3 names each callback's row).
    const callbacks = this.callbacks.insertWithRows(OWN_PARAMS + 1, '$3', WRITTEN);
    const audit = this.audit.rowsInsert(callbacks.next, WRITTEN);
    const write = (lock: Lock): Sql => ({
      name: `row-write-${meta.tableName}-${lock}`,
      text: `
        WITH input AS (
          SELECT r.*, ($2::text[])[r.ordinality::int]::xid AS row_version
            FROM json_populate_recordset(NULL::${table}, $1::json) WITH ORDINALITY AS r
        ), locked AS (
          -- The rows by primary-key probes (an array): joined to the input, a generic plan made while
          -- the table was small reads all of it (test/row-write-plans.e2e-spec.ts).
          SELECT t.id FROM ${table} t WHERE t.id = ANY (ARRAY(SELECT id FROM input)) ${LOCKS[lock]}
        ), written AS (
          UPDATE ${table} t SET ${columns.map((c) => `"${c.databaseName}" = i."${c.databaseName}"`).join(', ')}
            FROM input i
           WHERE t.id = ANY (ARRAY(SELECT id FROM locked)) AND t.id = i.id AND t.xmin = i.row_version
          RETURNING t.id
        ), recorded AS (${callbacks.text}
        ), audited AS (${audit.text})
        SELECT l.id, EXISTS (SELECT 1 FROM written w WHERE w.id = l.id) AS written FROM locked l`,
    });
    return {
      columns,
      read: {
        name: `row-read-${meta.tableName}`,
        text: `SELECT xmin::text AS row_version, * FROM ${table} WHERE id = ANY($1::uuid[])`,
      },
      writes: { together: write('together'), alone: write('alone') },
      callbacks,
      audit,
    };
  }
}
