import type { ClientBase, QueryConfig, QueryResult, QueryResultRow } from 'pg';

/** What runs statements one at a time on a connection: the admission loop's, each with a deadline. */
export interface SqlSession {
  query<R extends QueryResultRow = QueryResultRow>(q: QueryConfig): Promise<QueryResult<R>>;
}

/**
 * A statement that got no answer within its session's deadline: the connection went silent (a
 * partition, a server that stopped answering; no reset ever comes). A type of its own, so that
 * callers recognise it without reading the driver's message text.
 */
export class StatementTimeout extends Error {
  constructor(ms: number) {
    super(`no answer from PostgreSQL within ${ms} ms`);
    this.name = 'StatementTimeout';
  }
}

/**
 * `conn`'s statements, each failing with StatementTimeout once it has waited `ms`. The connection
 * is left as it is (the statement may still be under way): the caller decides whether to end it.
 */
export function sessionWithDeadline(conn: ClientBase, ms: number): SqlSession {
  return {
    query: <R extends QueryResultRow>(q: QueryConfig) => {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new StatementTimeout(ms)), ms);
      });
      return Promise.race([conn.query<R>(q), deadline]).finally(() => clearTimeout(timer));
    },
  };
}
