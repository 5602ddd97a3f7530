import { Injectable } from '@nestjs/common';
import type { ClientBase } from 'pg';

/** Any fixed number (the migrations use 727_001): one process at a time prunes. */
const RETENTION_LOCK = 727_002;

/**
 * The retention pass's session lock (callback-retention.ts), on the pass's own connection: released
 * by {@link unlock} or, should the process die, by PostgreSQL when the connection goes.
 */
@Injectable()
export class RetentionLockRepository {
  /** Whether this connection now holds the lock (false: another process is pruning). */
  async tryLock(client: Pick<ClientBase, 'query'>): Promise<boolean> {
    const [{ locked }] = (
      await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [RETENTION_LOCK])
    ).rows;
    return locked;
  }

  async unlock(client: Pick<ClientBase, 'query'>): Promise<void> {
    await client.query('SELECT pg_advisory_unlock($1)', [RETENTION_LOCK]);
  }
}
