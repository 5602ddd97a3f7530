import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool, PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import { RepeatLimitedLog } from '../common/repeat-limited-log.js';
import { APP_CONFIG, AppConfig } from '../config/app-config.js';
import { rawPool } from '../database/database.js';
import { Metrics } from '../metrics/metrics.js';
import { AdmissionSignal } from './admission-signal.js';
import { Batcher } from './batcher.js';
import type { SendResult } from './callback-sender.js';
import { DESTINATION_COLUMNS, DestinationRow, SAVE_DESTINATIONS, saveParams, stateOf } from './destination-store.js';
import { DestinationState, newDestination, WindowConfig, windowConfigOf } from './destination-window.js';
import { settleAttempt, SettledAttempt } from './settle-attempt.js';
import { RetryPolicy } from './retry-policy.js';

/** What settlement needs of the callback a worker loaded. */
export interface SettlingRow {
  id: string;
  destination: string;
  attempt_count: number;
  schedule_attempts: number;
  /** schedule_started_at in microseconds, as text: a redelivery meanwhile changes it. */
  schedule_key: string;
}

export interface Attempt {
  row: SettlingRow;
  /** When the request started and when its answer (or error) came, this process's clock (ms). */
  startedAt: number;
  answeredAt: number;
  result: SendResult;
}

/**
 * The attempts, their callbacks' new states and their destinations' new windows, in one
 * statement. A callback whose lease lapsed meanwhile (back to `pending`, not attempted since)
 * still takes this outcome; one redelivered meanwhile (its schedule restarted) keeps its fresh
 * schedule unless this attempt delivered it. The attempt is logged either way.
 */
const RECORD = `
  WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::int[], $3::timestamptz[], $4::int[], $5::int[], $6::text[], $7::text[], $8::text[],
                         $9::text[], $10::float8[], $11::text[], $12::int[], $13::int[], $14::text[])
      AS t(id, number, started_at, duration_ms, status_code, error, response_body, source_address,
           status, delay_ms, last_error, attempt_count, counts, schedule_key)
  ), attempt AS (
    INSERT INTO callback_attempts (callback_id, number, started_at, duration_ms, status_code, error, response_body, source_address)
    SELECT id, number, started_at, duration_ms, status_code, error, response_body, source_address FROM input
  ), same AS (
    SELECT i.*, (extract(epoch FROM c.schedule_started_at) * 1000000)::bigint::text = i.schedule_key AS same_schedule
      FROM input i JOIN callbacks c ON c.id = i.id
  )
  UPDATE callbacks c
     SET attempt_count = c.attempt_count + 1,
         status = CASE WHEN s.same_schedule OR s.status = 'delivered' THEN s.status ELSE 'pending' END,
         schedule_attempts = c.schedule_attempts + CASE WHEN s.same_schedule THEN s.counts ELSE 0 END,
         next_attempt_at = CASE WHEN s.status = 'delivered' THEN NULL
                                WHEN NOT s.same_schedule THEN now()
                                WHEN s.delay_ms IS NULL THEN NULL
                                ELSE now() + s.delay_ms * interval '1 millisecond' END,
         last_error = s.last_error,
         lease_until = NULL,
         delivered_at = CASE WHEN s.status = 'delivered' THEN now() ELSE c.delivered_at END
    FROM same s
   WHERE c.id = s.id AND c.status IN ('sending', 'pending') AND c.attempt_count = s.attempt_count`;

const LOCK_DESTINATIONS = `
  SELECT ${DESTINATION_COLUMNS}, (extract(epoch FROM now()) * 1000)::float8 AS now
    FROM destinations d WHERE d.origin = ANY($1::text[]) ORDER BY d.origin FOR UPDATE`;

/** How long a worker keeps trying to record an outcome PostgreSQL does not take (an outage). */
const RECORD_PATIENCE_MS = 60_000;
const RECORD_RETRY_MS = 500;

/**
 * Settles attempts in batches (the attempts of one tick go together): each batch is one short
 * transaction that locks its destinations (in origin order: no deadlocks), folds every outcome
 * into its destination's window and breaker, and writes attempts, callbacks and destinations.
 * Then admission is woken: the room just freed is used within a pass.
 */
@Injectable()
export class Settlement {
  private readonly log = new Logger('Destinations');
  private readonly warnings = new RepeatLimitedLog((m) => this.log.warn(m));
  private readonly pool: Pool;
  private readonly window: WindowConfig;
  private readonly policy: RetryPolicy;
  private readonly batches = new Batcher<Attempt, SettledAttempt>((items) => this.settleMany(items));

  constructor(
    @InjectDataSource() db: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly metrics: Metrics,
    private readonly signal: AdmissionSignal,
  ) {
    this.pool = rawPool(db);
    this.window = windowConfigOf(config);
    this.policy = new RetryPolicy(config.callbackRetryScheduleMs);
  }

  settle(a: Attempt): Promise<SettledAttempt> {
    return this.batches.call(a);
  }

  /**
   * One batch; if PostgreSQL refuses it, each attempt alone, and one still refused without the
   * receiver's text. An outage is waited out for RECORD_PATIENCE_MS; after that the callback's
   * lease brings it back (at-least-once: it is sent again).
   */
  private async settleMany(items: Attempt[]): Promise<SettledAttempt[]> {
    const deadline = Date.now() + RECORD_PATIENCE_MS;
    for (;;) {
      try {
        const settled = await this.write(items);
        this.signal.wake();
        return settled;
      } catch (e) {
        if (isDataError(e) && items.length > 1) {
          this.metrics.recordFailures.inc({ stage: 'batch' });
          this.warnings.warn(`attempt records refused as a batch, writing them one by one: ${(e as Error).message}`);
          return (await Promise.all(items.map((i) => this.settleMany([i])))).flat();
        }
        if (isDataError(e)) return this.settleMany([withoutAnswerText(items[0])]).finally(() => this.metrics.recordFailures.inc({ stage: 'single' }));
        if (Date.now() > deadline) {
          this.metrics.recordFailures.inc({ stage: 'lost' });
          throw e;
        }
        this.warnings.warn(`cannot record attempts, trying again: ${(e as Error).message}`);
        await new Promise((r) => setTimeout(r, RECORD_RETRY_MS));
      }
    }
  }

  private async write(items: Attempt[]): Promise<SettledAttempt[]> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const states = await this.lock(client, [...new Set(items.map((i) => i.row.destination))]);
      const skew = states.now - Date.now();
      const changed = new Map<string, DestinationState>();
      const settled = items.map((a) => {
        const s = settleAttempt(states.byOrigin.get(a.row.destination) ?? newDestination(this.window), a, skew, this.policy, this.window);
        states.byOrigin.set(a.row.destination, s.destination);
        changed.set(a.row.destination, s.destination);
        return s;
      });
      await client.query({ name: 'settlement-record', text: RECORD, values: recordParams(items, settled) });
      await client.query({ name: 'settlement-destinations', text: SAVE_DESTINATIONS, values: saveParams(changed) });
      await client.query('COMMIT');
      for (const s of settled) if (s.transition) this.noteTransition(s);
      return settled;
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw e;
    } finally {
      client.release();
    }
  }

  private async lock(client: PoolClient, origins: string[]): Promise<{ now: number; byOrigin: Map<string, DestinationState> }> {
    const { rows } = await client.query<DestinationRow & { now: number }>({ name: 'settlement-lock', text: LOCK_DESTINATIONS, values: [origins] });
    const now = rows[0]?.now ?? Date.now();
    return { now, byOrigin: new Map(rows.map((r) => [r.origin, stateOf(r)])) };
  }

  private noteTransition(s: SettledAttempt): void {
    this.metrics.circuitTransitions.inc({ transition: s.transition! });
    const why = s.destination.lastError ? ` (last error: ${s.destination.lastError})` : '';
    if (s.transition === 'opened') this.log.warn(`circuit opened for ${s.origin} after ${s.destination.failures} consecutive failures${why}`);
    if (s.transition === 'closed') this.log.log(`circuit closed for ${s.origin}: a probe was answered`);
  }
}

function recordParams(items: Attempt[], settled: SettledAttempt[]): unknown[] {
  const col = <T>(f: (a: Attempt, s: SettledAttempt) => T) => items.map((a, i) => f(a, settled[i]));
  return [
    col((a) => a.row.id),
    col((a) => a.row.attempt_count + 1),
    col((a) => new Date(a.startedAt)),
    col((a) => a.result.durationMs),
    col((a) => a.result.statusCode),
    col((a) => a.result.error),
    col((a) => a.result.responseBody),
    col((a) => a.result.sourceAddress),
    col((_, s) => s.status),
    col((_, s) => s.delayMs),
    col((_, s) => s.lastError),
    col((a) => a.row.attempt_count),
    col((_, s) => (s.counts ? 1 : 0)),
    col((a) => a.row.schedule_key),
  ];
}

/** PostgreSQL refused what a row holds (an invalid value), as opposed to being out of reach. */
function isDataError(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' && /^(22|23)/.test(code);
}

/** Last resort for one record PostgreSQL refused: keep the attempt and outcome, drop what the receiver sent. */
function withoutAnswerText(a: Attempt): Attempt {
  const plain = (v: string | null) => (v === null ? null : v.replace(/[^\x20-\x7e]/g, '?'));
  return { ...a, result: { ...a.result, responseBody: null, error: plain(a.result.error) } };
}
