import { microsKey } from '../../platform/index.js';

/**
 * The callbacks of a worker's tick, in one statement: each row, its partner's signing keys (sealed)
 * and client certificate, its lease as the job carries it and how long that lease has left.
 */
export const LOAD = `
  SELECT c.id, c.message, c.trace_parent, c.url, c.destination, c.body, c.status, c.schedule_attempts, c.attempt_count, c.attempt_limit,
         (extract(epoch FROM c.created_at) * 1000)::float8 AS created_at, ${microsKey('c.schedule_started_at')} AS schedule_key,
         p.id AS partner_id, p.signing_secret, CASE WHEN p.previous_secret_expires_at > now() THEN p.previous_signing_secret END AS previous_signing_secret,
         cc.id AS client_tls_id, ${microsKey('c.lease_until')} AS lease,
         (extract(epoch FROM c.lease_until - now()) * 1000)::float8 AS lease_left_ms
    -- The callbacks first, by primary key: joined from the partner's side, a generic plan can read all its callbacks.
    FROM (SELECT * FROM callbacks WHERE id = ANY($1::uuid[]) OFFSET 0) c JOIN partners p ON p.id = c.partner_id
    LEFT JOIN partner_client_certificates cc ON cc.partner_id = c.partner_id`;
