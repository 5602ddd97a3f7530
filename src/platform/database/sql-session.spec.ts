import type { ClientBase } from 'pg';
import { sessionWithDeadline, StatementTimeout } from './sql-session.js';

/** A connection whose statements answer after `ms` (never, for Infinity), or fail with `error`. */
const conn = (ms: number, error?: Error) =>
  ({
    query: () =>
      new Promise(
        (resolve, reject) =>
          ms !== Infinity && setTimeout(() => (error ? reject(error) : resolve({ rows: [{ ok: true }] })), ms),
      ),
  }) as unknown as ClientBase;

describe('sessionWithDeadline', () => {
  it('fails a statement unanswered past the deadline with StatementTimeout, recognised by its type', async () => {
    const e = await sessionWithDeadline(conn(Infinity), 20)
      .query({ text: 'SELECT 1' })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(StatementTimeout);
  });

  it("answers in time as the connection does, and passes the driver's own errors through as they are", async () => {
    expect((await sessionWithDeadline(conn(1), 1000).query({ text: 'SELECT 1' })).rows).toEqual([{ ok: true }]);
    // pg's own timeout error, by its text: not a StatementTimeout, whatever it says.
    const e = await sessionWithDeadline(conn(1, new Error('Query read timeout')), 1000)
      .query({ text: 'SELECT 1' })
      .catch((x: unknown) => x);
    expect(e).not.toBeInstanceOf(StatementTimeout);
  });
});
