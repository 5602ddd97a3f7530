import type { Pool, PoolClient } from 'pg';
import { Injectable } from '@nestjs/common';
import { SqlPool } from '../../platform/index.js';

/** Rows per statement: each batch is one short transaction holding few row locks. */
export const RETENTION_BATCH = 1000;

/**
 * Locks a batch of the oldest delivered callbacks (skipping any another transaction holds, e.g.
 * a redelivery under way) and deletes them with their attempts, and the operational events they
 * delivered, in the same statement; the foreign key is checked at the statement's end, when both
 * are gone.
 */
export const PRUNE_CALLBACKS = `
  WITH doomed AS (
    SELECT id FROM callbacks
     WHERE status = 'delivered' AND delivered_at < now() - $1 * interval '1 millisecond'
     ORDER BY delivered_at
     LIMIT ${RETENTION_BATCH}
       FOR UPDATE SKIP LOCKED
  ), attempts AS (
    DELETE FROM callback_attempts a USING doomed d WHERE a.callback_id = d.id RETURNING 1
  ), gone AS (
    DELETE FROM callbacks c USING doomed d WHERE c.id = d.id RETURNING 1
  ), events AS (
    DELETE FROM operational_events e USING doomed d WHERE e.id = d.id
  )
  SELECT (SELECT count(*) FROM gone)::int AS callbacks, (SELECT count(*) FROM attempts)::int AS attempts`;

/**
 * PRUNE_CALLBACKS with sorts disabled, so its only plan reads `callbacks_delivered_at_idx` in
 * order and stops after the batch: statistics taken while the table held no delivered rows (a
 * backlog analysed before it drained) made reading every delivered row through
 * `callbacks_status_seq_idx` and sorting them look as cheap, a cost that grows with the delivered
 * rows instead of the batch (docs/architecture.md, "Every statement on the delivery path costs
 * O(rows it touches)"). The connection is this pass's own; SET LOCAL ends with the transaction.
 */
export const PRUNE_PLANNER = 'SET LOCAL enable_sort = off';

/** Operational events never sent (the partner had no operationsUrl) older than the retention, a batch. */
export const PRUNE_UNSENT_EVENTS = `
  DELETE FROM operational_events WHERE id IN (
    SELECT id FROM operational_events WHERE NOT sent AND created_at < now() - $1 * interval '1 millisecond'
     LIMIT ${RETENTION_BATCH})`;

export const DELIVERIES_UNDER_WAY = `SELECT 1 FROM callbacks WHERE status = 'sending' LIMIT 1`;

/**
 * Retention's statements. A pass's deletes run on the pass's own connection (`client`, one of
 * SqlPool's: it holds the retention lock, and a batch is its transaction); the check for
 * deliveries under way on any of SqlPool's.
 */
@Injectable()
export class RetentionStore {
  private readonly pool: Pool;

  constructor(sql: SqlPool) {
    this.pool = sql.pool;
  }

  /**
   * A batch of the oldest delivered callbacks, with their attempts and the events they delivered, in one
   * transaction.
   */
  async pruneCallbacks(client: PoolClient, retentionMs: number): Promise<{ callbacks: number; attempts: number }> {
    await client.query('BEGIN');
    await client.query(PRUNE_PLANNER);
    const { rows } = await client.query<{ callbacks: number; attempts: number }>(PRUNE_CALLBACKS, [retentionMs]);
    await client.query('COMMIT');
    return rows[0];
  }

  /** A batch of the operational events never sent, older than the retention; how many. */
  async pruneUnsentEvents(client: PoolClient, retentionMs: number): Promise<number> {
    return (await client.query(PRUNE_UNSENT_EVENTS, [retentionMs])).rowCount ?? 0;
  }

  /** Whether deliveries are under way (admitted callbacks). */
  async deliveriesUnderWay(): Promise<boolean> {
    const { rows } = await this.pool.query(DELIVERIES_UNDER_WAY);
    return rows.length > 0;
  }
}
