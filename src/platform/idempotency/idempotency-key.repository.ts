import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { ClientBase } from 'pg';
import { DataSource } from 'typeorm';

/** How long a key is remembered (docs/partners.md, "Safe retries of creates"); older rows are ignored and replaced. */
export const IDEMPOTENCY_WINDOW = `interval '24 hours'`;

/** A key's row within the window. */
export type KeyRow = { request_hash: string; status_code: number | null; response: string | null };

/**
 * Keys past their 24 h, a batch ($1 rows), for the retention pass (src/operations/callback-retention.ts):
 * after that a key is only weight.
 */
const PRUNE_IDEMPOTENCY_KEYS = `
  WITH doomed AS (
    SELECT scope, key FROM idempotency_keys
     WHERE created_at < now() - ${IDEMPOTENCY_WINDOW}
     LIMIT $1
       FOR UPDATE SKIP LOCKED
  )
  DELETE FROM idempotency_keys k USING doomed d WHERE k.scope = d.scope AND k.key = d.key`;

/** The statements of idempotency_keys (idempotency.interceptor.ts), one method each. */
@Injectable()
export class IdempotencyKeyRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * One round trip claims the key: a new row, or in place of one older than the window (as if
   * that one had been deleted first); a row within the window is left as it is (false).
   */
  async claim(scope: string, key: string, requestHash: string): Promise<boolean> {
    const claimed: unknown[] = await this.db.query(
      `INSERT INTO idempotency_keys (scope, key, request_hash) VALUES ($1, $2, $3)
       ON CONFLICT (scope, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, ` +
        `status_code = NULL, response = NULL, created_at = now()
        WHERE idempotency_keys.created_at < now() - ${IDEMPOTENCY_WINDOW}
       RETURNING key`,
      [scope, key, requestHash],
    );
    return claimed.length > 0;
  }

  /** The key's row within the window. */
  async find(scope: string, key: string): Promise<KeyRow | undefined> {
    const [row]: KeyRow[] = await this.db.query(
      `SELECT request_hash, status_code, response FROM idempotency_keys ` +
        `WHERE scope = $1 AND key = $2 AND created_at >= now() - ${IDEMPOTENCY_WINDOW}`,
      [scope, key],
    );
    return row;
  }

  /** Releases a claimed key that has no response. */
  async release(scope: string, key: string): Promise<void> {
    await this.db.query(`DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND status_code IS NULL`, [
      scope,
      key,
    ]);
  }

  /** Stores the (sealed) response of the key's request. */
  async complete(scope: string, key: string, status: number, sealed: string): Promise<void> {
    await this.db.query(`UPDATE idempotency_keys SET status_code = $3, response = $4 WHERE scope = $1 AND key = $2`, [
      scope,
      key,
      status,
      sealed,
    ]);
  }

  /** Deletes up to `limit` keys past their window on the retention pass's connection; how many. */
  async prune(client: Pick<ClientBase, 'query'>, limit: number): Promise<number> {
    return (await client.query(PRUNE_IDEMPOTENCY_KEYS, [limit])).rowCount ?? 0;
  }
}

/** The retention pass's part of the idempotency keys (src/operations/callback-retention.ts). */
@Injectable()
export class IdempotencyPruning {
  constructor(private readonly keys: IdempotencyKeyRepository) {}

  /** Up to `limit` keys past their 24 h, on the pass's connection; how many went. */
  prune(client: Pick<ClientBase, 'query'>, limit: number): Promise<number> {
    return this.keys.prune(client, limit);
  }
}
