/** A connection the start-up sends a statement on: a pg client or the data source's query runner. */
interface StartUpConnection {
  query(text: string, values?: unknown[]): Promise<unknown>;
}

/** Any fixed number: the advisory lock that lets one process at a time run migrations. */
const MIGRATION_LOCK = 727_001;
/** Taken in the maintenance database around creating a missing database. */
const CREATE_DATABASE_LOCK = 727_002;

/**
 * The start-up's statements (database.ts: ensureDatabase, openDatabase), one static method each:
 * they run before Nest exists, so nothing injects them, and nothing makes this class's objects.
 * Their snapshot calls each method over a recording connection (src/platform/snapshots.ts).
 */
export class StartUpRepository {
  /** Waits for the maintenance database's lock around creating a database (ended with the session). */
  static async lockCreation(c: StartUpConnection): Promise<void> {
    await c.query('SELECT pg_advisory_lock($1)', [CREATE_DATABASE_LOCK]);
  }

  static async databaseExists(c: StartUpConnection, name: string): Promise<boolean> {
    const found = (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])) as { rowCount: number };
    return found.rowCount !== 0;
  }

  /** CREATE DATABASE takes no parameter: the name is quoted as an identifier. */
  static async createDatabase(c: StartUpConnection, name: string): Promise<void> {
    await c.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  }

  /** Takes the migrations' lock if no other process holds it. */
  static async tryMigrationLock(c: StartUpConnection): Promise<boolean> {
    const rows = (await c.query('SELECT pg_try_advisory_lock($1) AS locked', [MIGRATION_LOCK])) as {
      locked: boolean;
    }[];
    return rows[0].locked;
  }

  static async releaseMigrationLock(c: StartUpConnection): Promise<void> {
    await c.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
  }

  /** The server's autovacuum setting ('on' or 'off'). */
  static async autovacuum(c: StartUpConnection): Promise<string> {
    const [{ autovacuum }] = (await c.query('SHOW autovacuum')) as { autovacuum: string }[];
    return autovacuum;
  }
}
