import type { Pool } from 'pg';
import { Injectable } from '@nestjs/common';
import { microsKey, SqlPool } from '../../platform/index.js';

/**
 * The callbacks of a worker's tick, in one statement: each row, its partner's signing keys (sealed)
 * and client certificate, its lease as the job carries it and how long that lease has left.
 */
export const LOAD = `
  SELECT c.id, c.message, c.trace_parent, c.url, c.destination, c.body, c.status, c.schedule_attempts, c.attempt_count,
         c.attempt_limit, c.test, c.restarted_by,
         (extract(epoch FROM c.created_at) * 1000)::float8 AS created_at,
         ${microsKey('c.schedule_started_at')} AS schedule_key,
         p.id AS partner_id, p.signing_secret,
         CASE WHEN p.previous_secret_expires_at > now() THEN p.previous_signing_secret END AS previous_signing_secret,
         cc.id AS client_tls_id, ${microsKey('c.lease_until')} AS lease,
         (extract(epoch FROM c.lease_until - now()) * 1000)::float8 AS lease_left_ms
    -- The callbacks first, by primary key: joined from the partner's side, a generic plan can read all its callbacks.
    FROM (SELECT * FROM callbacks WHERE id = ANY($1::uuid[]) OFFSET 0) c JOIN partners p ON p.id = c.partner_id
    LEFT JOIN partner_client_certificates cc ON cc.partner_id = c.partner_id`;

/** A callback as a delivery loads it (LOAD). */
export interface LoadedCallback {
  id: string;
  message: number;
  /** The trace of the change that recorded it (null: tracing was off then). */
  trace_parent: string | null;
  url: string;
  /** Its destination's key (callback-destination.ts). */
  destination: string;
  body: string;
  status: string;
  schedule_attempts: number;
  attempt_count: number;
  /** The attempts its schedule allows when fewer than the deployment's (a test callback: 1); null: all of it. */
  attempt_limit: number | null;
  /** A test callback (its one attempt is a test's). */
  test: boolean;
  /** The repair that last restarted its schedule, if any: its next first attempt is that one's. */
  restarted_by: 'redelivery' | 'replay' | null;
  /** Epoch milliseconds, PostgreSQL's clock (numbers, not Dates: nothing to parse per row). */
  created_at: number;
  /** schedule_started_at in microseconds, as text: a redelivery meanwhile changes it. */
  schedule_key: string;
  /** The partner whose row the keys below are sealed for. */
  partner_id: string;
  /** The partner's signing key, sealed (a `whsec_` secret or a `whsk_` Ed25519 key). */
  signing_secret: string;
  /** The key before the last rotation or switch, sealed, while it is still honoured (null once expired). */
  previous_signing_secret: string | null;
  /** The partner's client certificate upload, null without one. */
  client_tls_id: string | null;
  /** `lease_until` in microseconds (as the job carries it), and how long it has left, by PostgreSQL's clock. */
  lease: string | null;
  lease_left_ms: number | null;
}

/**
 * The delivery's read of its callbacks, on SqlPool's connections (prepared, planned by index
 * whatever the statistics: the plans tests check LOAD there). The caller batches the ids of a tick.
 */
@Injectable()
export class DeliveryLoads {
  private readonly pool: Pool;

  constructor(sql: SqlPool) {
    this.pool = sql.pool;
  }

  /** The callbacks of these ids that exist, in no particular order. */
  async load(ids: string[]): Promise<LoadedCallback[]> {
    return (await this.pool.query<LoadedCallback>({ name: 'callback-delivery-load', text: LOAD, values: [ids] })).rows;
  }
}
