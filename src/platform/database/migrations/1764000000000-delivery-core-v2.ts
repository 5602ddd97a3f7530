import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Delivery core v2: PostgreSQL is the queue of record. A callback is `pending` (due at
 * next_attempt_at), `sending` (admitted to a worker until lease_until), `delivered` or `failed`;
 * "queued", "parked" and "waiting for a probe" are all just `pending`. Each destination's window
 * and circuit live in `destinations`, shared by every process; `delivery_workers` holds the live
 * workers' delivery slots, which bound what admission hands to Redis.
 */
export class DeliveryCoreV21764000000000 implements MigrationInterface {
  name = 'DeliveryCoreV21764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE callbacks DROP CONSTRAINT IF EXISTS callbacks_status_check`);
    await q.query(`ALTER TABLE callbacks
      ADD CONSTRAINT callbacks_status_check CHECK (status IN ('pending','sending','delivered','failed'))`);
    await q.query(`ALTER TABLE callbacks ADD COLUMN lease_until timestamptz`);
    // Queued, parked and waiting rows of v1 are all pending: parked ones are due now.
    await q.query(`UPDATE callbacks SET next_attempt_at = now()
      WHERE status = 'pending' AND (parked_at IS NOT NULL OR next_attempt_at IS NULL)`);
    // callbacks_pending_due_idx (next_attempt_at) WHERE pending stays: the dashboard's Waiting and
    // Delayed tabs read it in order.
    for (const index of ['callbacks_unenqueued_idx', 'callbacks_parked_idx', 'callbacks_parked_schedule_idx']) {
      await q.query(`DROP INDEX IF EXISTS ${index}`);
    }
    await q.query(`ALTER TABLE callbacks DROP COLUMN enqueued_at, DROP COLUMN parked_at`);
    // Admission: a destination's oldest due callbacks. Outage expiry: an open destination's oldest schedules.
    await q.query(
      `CREATE INDEX callbacks_pending_idx ON callbacks (destination, next_attempt_at) WHERE status = 'pending'`,
    );
    await q.query(`CREATE INDEX callbacks_pending_schedule_idx ON callbacks (destination, schedule_started_at)
      WHERE status = 'pending'`);
    // Admission counts what is in flight per destination and returns expired leases.
    await q.query(
      `CREATE INDEX callbacks_sending_idx ON callbacks (destination, lease_until) WHERE status = 'sending'`,
    );

    await q.query(`
      CREATE TABLE destinations (
        origin text PRIMARY KEY,
        window_size integer NOT NULL DEFAULT 2 CHECK (window_size >= 1),
        failures integer NOT NULL DEFAULT 0,
        opened_at timestamptz,
        next_probe_at timestamptz,
        probe_ms integer NOT NULL DEFAULT 0,
        last_error text,
        last_ok_at timestamptz,
        version bigint NOT NULL DEFAULT 0
      )`);
    await q.query(
      `INSERT INTO destinations (origin) SELECT DISTINCT origin FROM callback_destinations ON CONFLICT DO NOTHING`,
    );
    // Every writer of callbacks (the recorder, an operator's bulk load) makes its destinations
    // known, once per statement, so admission finds them and the partners' lists show them.
    await q.query(`
      CREATE FUNCTION callbacks_note_destinations() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO destinations (origin) SELECT DISTINCT destination FROM added ON CONFLICT DO NOTHING;
        INSERT INTO callback_destinations (partner_id, origin)
          SELECT DISTINCT partner_id, destination FROM added ON CONFLICT DO NOTHING;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER callbacks_note_destinations AFTER INSERT ON callbacks
        REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION callbacks_note_destinations()`);
    await q.query(`
      CREATE TABLE delivery_workers (
        id text PRIMARY KEY,
        concurrency integer NOT NULL CHECK (concurrency > 0),
        expires_at timestamptz NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE delivery_workers`);
    await q.query(`DROP TRIGGER callbacks_note_destinations ON callbacks`);
    await q.query(`DROP FUNCTION callbacks_note_destinations()`);
    await q.query(`DROP TABLE destinations`);
    for (const index of ['callbacks_sending_idx', 'callbacks_pending_schedule_idx', 'callbacks_pending_idx'])
      await q.query(`DROP INDEX ${index}`);
    await q.query(`UPDATE callbacks SET status = 'pending' WHERE status = 'sending'`);
    await q.query(`ALTER TABLE callbacks
      ADD COLUMN enqueued_at timestamptz, ADD COLUMN parked_at timestamptz, DROP COLUMN lease_until`);
    await q.query(`ALTER TABLE callbacks DROP CONSTRAINT callbacks_status_check`);
    await q.query(
      `ALTER TABLE callbacks ADD CONSTRAINT callbacks_status_check CHECK (status IN ('pending','delivered','failed'))`,
    );
    await q.query(`CREATE INDEX callbacks_unenqueued_idx ON callbacks (seq)
      WHERE status = 'pending' AND enqueued_at IS NULL AND parked_at IS NULL`);
    await q.query(`CREATE INDEX callbacks_parked_idx ON callbacks (destination, seq)
      WHERE status = 'pending' AND parked_at IS NOT NULL`);
    await q.query(`CREATE INDEX callbacks_parked_schedule_idx ON callbacks (schedule_started_at)
      WHERE status = 'pending' AND parked_at IS NOT NULL`);
  }
}
