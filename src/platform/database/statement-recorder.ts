import { type Provider, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions, type EntityManager, type EntityTarget, type ObjectLiteral } from 'typeorm';
import { LockedRows } from '../common/locked-rows.repository.js';
import { SqlPool } from './sql-pool.js';
import type { SnapshotStatement } from './sql-snapshots.js';

/** A statement as a connection was sent it: its text, and the name it is prepared under (if any). */
export interface RecordedStatement {
  text: string;
  name?: string;
}

/**
 * A stand-in for any connection (a SqlSession, an EntityManager, a DataSource, a pg client) or any
 * argument: each statement it is sent is recorded and answered with the stand-in itself; every
 * property is a stand-in, it iterates as two of itself, and a transaction runs its callback on it.
 * No statement runs.
 */
export function recordingConnection(record: (s: RecordedStatement) => void): unknown {
  const self: unknown = new Proxy(function () {}, {
    get(_t, p) {
      if (p === 'query')
        return (q: string | { text: string; name?: string }) => {
          record(typeof q === 'string' ? { text: q.trim() } : { text: q.text.trim(), name: q.name });
          return Promise.resolve(self);
        };
      if (p === 'transaction') return (...a: unknown[]) => (a[a.length - 1] as (m: unknown) => unknown)(self);
      if (p === Symbol.iterator) return () => [self, self][Symbol.iterator]();
      if (p === Symbol.toPrimitive) return (hint: string) => (hint === 'number' ? 0 : '0');
      if (p === 'then') return undefined;
      if (p === 'length') return 1;
      if (typeof p === 'string' && p in Array.prototype)
        return (Array.prototype as unknown as Record<string, unknown>)[p];
      return self;
    },
    apply: () => self,
  });
  return self;
}

/** What TypeORM sends around a transaction of its own: not a statement of the method's. */
const TRANSACTION_BOUNDS = new Set(['START TRANSACTION', 'COMMIT', 'ROLLBACK']);

/**
 * A data source of these entities that is never connected: the statements TypeORM builds for them
 * (find, save, query builders) and those it is given (`query`) are recorded, each answered with no
 * rows. Its metadata is built as the app's data source builds it (TypeORM's defaults).
 */
export async function recordingDataSource(
  entities: DataSourceOptions['entities'],
  record: (s: RecordedStatement) => void,
): Promise<DataSource> {
  const db = new DataSource({ type: 'postgres', entities });
  await (db as unknown as { buildMetadatas(): Promise<void> }).buildMetadatas();
  const driver = db.driver as unknown as { createQueryRunner(mode: string): Record<string, unknown> };
  const make = driver.createQueryRunner.bind(driver);
  driver.createQueryRunner = (mode) => {
    const runner = make(mode);
    runner.connect = () => Promise.resolve({});
    runner.release = () => Promise.resolve();
    runner.query = (text: string, _values?: unknown[], structured?: boolean) => {
      if (!TRANSACTION_BOUNDS.has(text)) record({ text: text.trim() });
      return Promise.resolve(structured ? { records: [], raw: [], affected: 0 } : []);
    };
    return runner;
  };
  return db;
}

/**
 * A row of an entity as a method writes one back: every column given (null), its id `id`. A new
 * row (`fresh`) as the code inserts one: every column but those the database gives (generated, the
 * creation time).
 */
export function standInRow<T extends ObjectLiteral>(m: EntityManager, entity: EntityTarget<T>, fresh = false): T {
  const given = m.connection
    .getMetadata(entity)
    .columns.filter((c) => !fresh || (!c.isGenerated && !c.isCreateDate))
    .map((c) => [c.propertyName, null]);
  return { ...Object.fromEntries(given), ...(fresh ? {} : { id: 'id' }) } as T;
}

type Methods = Record<string, (...a: unknown[]) => unknown>;

/**
 * How a method is called for its snapshot when stand-in arguments do not reach its statements: its
 * calls. `orm` is the recording data source's manager (repositoryStatements' `entities`), for a
 * method whose statements TypeORM builds from an entity.
 */
export type SnapshotCalls = Record<string, (repository: Methods, standIn: unknown, orm: EntityManager) => unknown[]>;

/** What each method of a repository sends, by `Class.method`, in the order sent. */
type SentByMethod = Map<string, RecordedStatement[]>;

/**
 * Calls every method of each repository, made by Nest as the app makes it but over a recording
 * connection (its DataSource and SqlPool), with stand-in arguments, or as `calls` says (by
 * `Class.method`); what each sent. A method that fails on a stand-in's answer after sending is kept
 * with what it sent.
 */
async function sentByRepositories(
  repositories: Type[],
  calls: SnapshotCalls = {},
  providers: Provider[] = [],
  entities: DataSourceOptions['entities'] = [],
): Promise<SentByMethod> {
  let sent: RecordedStatement[] = [];
  const conn = recordingConnection((s) => sent.push(s));
  const orm = await recordingDataSource(entities, (s) => sent.push(s));
  const app = await NestFactory.createApplicationContext(
    {
      module: class RecordingRepositories {},
      providers: [
        ...repositories,
        ...providers,
        // With entities, the data source is the recording one, for the statements TypeORM builds.
        { provide: getDataSourceToken(), useValue: entities.length ? orm : conn },
        { provide: SqlPool, useValue: { pool: conn } },
      ],
    },
    { logger: false },
  );
  const byMethod: SentByMethod = new Map();
  try {
    for (const type of repositories) {
      const repository = app.get<Methods>(type);
      for (const method of Object.getOwnPropertyNames(type.prototype as object).filter((n) => n !== 'constructor')) {
        if (typeof repository[method] !== 'function') continue;
        sent = [];
        const args = Array.from({ length: repository[method].length }, () => conn);
        const call = calls[`${type.name}.${method}`];
        for (const pending of call ? call(repository, conn, orm.manager) : [repository[method](...args)]) {
          // What a stand-in's rows make of the method after its statements were sent does not matter here.
          await Promise.resolve(pending).catch(() => undefined);
        }
        byMethod.set(`${type.name}.${method}`, sent);
      }
    }
  } finally {
    await app.close();
  }
  return byMethod;
}

/**
 * What each static method of a class sends (a class whose methods run before Nest exists, as the
 * start-up's), called over a recording connection with stand-in arguments, or as `calls` says.
 */
async function sentByStatics(type: Type, calls: SnapshotCalls): Promise<SentByMethod> {
  let sent: RecordedStatement[] = [];
  const conn = recordingConnection((s) => sent.push(s));
  const statics = type as unknown as Methods;
  const byMethod: SentByMethod = new Map();
  for (const method of Object.getOwnPropertyNames(type).filter((n) => typeof statics[n] === 'function')) {
    sent = [];
    const call = calls[`${type.name}.${method}`];
    const args = Array.from({ length: statics[method].length }, () => conn);
    for (const pending of call ? call(statics, conn, conn as EntityManager) : [statics[method](...args)])
      await Promise.resolve(pending).catch(() => undefined);
    byMethod.set(`${type.name}.${method}`, sent);
  }
  return byMethod;
}

/** Each method's statements as snapshots name them: `Class.method` (or its prepared name), `#n` after the first. */
function named(on: string, byMethod: SentByMethod): SnapshotStatement[] {
  const statements: SnapshotStatement[] = [];
  for (const [method, sent] of byMethod) {
    const texts = new Map(sent.map((s) => [s.text, s.name]));
    [...texts].forEach(([text, name], i) =>
      statements.push({ name: name ?? (i ? `${method}#${i + 1}` : method), on, text }),
    );
  }
  return statements;
}

/** The snapshot statements of a class's static methods (sentByStatics), named as repositoryStatements names them. */
export async function staticStatements(
  on: string,
  type: Type,
  calls: SnapshotCalls = {},
): Promise<SnapshotStatement[]> {
  return named(on, await sentByStatics(type, calls));
}

/**
 * The snapshot statements of repositories (snapshotFiles): what each method sends, named
 * `Class.method` (its prepared name when it has one; `#n` after the first of several), run on `on`.
 * A method calls are given for (`calls`) may send the same text more than once: it is shown once.
 * With `entities`, the repositories' data source is a recording one of them (recordingDataSource).
 */
export async function repositoryStatements(
  on: string,
  repositories: Type[],
  calls: SnapshotCalls = {},
  providers: Provider[] = [],
  entities: DataSourceOptions['entities'] = [],
): Promise<SnapshotStatement[]> {
  return named(on, await sentByRepositories(repositories, calls, providers, entities));
}

/**
 * The platform's LockedRows as one module uses it (that module's snapshot): the lock of each entity
 * in `locked` and the write-back of each in `written`, over a recording data source of `entities`.
 */
export function lockedRowsStatements(
  locked: EntityTarget<ObjectLiteral>[],
  written: EntityTarget<ObjectLiteral & { id: string }>[],
  entities: DataSourceOptions['entities'],
): Promise<SnapshotStatement[]> {
  return repositoryStatements(
    'data-source',
    [LockedRows],
    {
      'LockedRows.lock': (r, _, orm) =>
        locked.map((e) => orm.transaction((m) => Promise.resolve(r.lock(m, e, { id: 'id' }, 'row')))),
      'LockedRows.writeBack': (r, _, orm) => written.map((e) => r.writeBack(orm, e, standInRow(orm, e))),
    },
    [],
    entities,
  );
}
