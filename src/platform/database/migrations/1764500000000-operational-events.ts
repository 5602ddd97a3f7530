import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Operational events (docs/partners.md, "Operational events"): what a partner is told of its
 * receivers' trouble. `operational_events` is their record, listed for the partner and operators;
 * each one sent (the partner has an operationsUrl) is also a row of `callbacks` with the same id,
 * `event_type` set and no company or message, delivered by the same core as callbacks. The
 * `callbacks.failed` event goes out at most once per destination and partner in 5 minutes:
 * `failure_notices` holds each one's window, what failed since its last event (pending), and its
 * last event (emitted: what the statement that told it returns).
 */
export class OperationalEvents1764500000000 implements MigrationInterface {
  name = 'OperationalEvents1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE callbacks
      ALTER COLUMN company_id DROP NOT NULL, ALTER COLUMN message DROP NOT NULL, ADD COLUMN event_type text`);
    // NOT VALID then VALIDATE: the check reads the table without blocking its writes meanwhile.
    await q.query(`ALTER TABLE callbacks ADD CONSTRAINT callbacks_kind_check
      CHECK ((event_type IS NULL) = (company_id IS NOT NULL AND message IS NOT NULL)) NOT VALID`);
    await q.query(`ALTER TABLE callbacks VALIDATE CONSTRAINT callbacks_kind_check`);
    await q.query(`
      CREATE TABLE operational_events (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
        partner_id uuid NOT NULL REFERENCES partners (id),
        type text NOT NULL CHECK (type IN ('destination.failing', 'destination.recovered', 'callbacks.failed')),
        created_at timestamptz NOT NULL DEFAULT now(),
        data jsonb NOT NULL,
        sent boolean NOT NULL
      )`);
    await q.query(`CREATE INDEX operational_events_partner_seq_idx ON operational_events (partner_id, seq)`);
    await q.query(`
      CREATE TABLE failure_notices (
        partner_id uuid NOT NULL REFERENCES partners (id),
        destination text NOT NULL,
        window_ends_at timestamptz NOT NULL,
        pending_count integer NOT NULL DEFAULT 0,
        pending_from timestamptz,
        pending_to timestamptz,
        emitted_at timestamptz NOT NULL,
        emitted_count integer NOT NULL,
        emitted_from timestamptz NOT NULL,
        emitted_to timestamptz NOT NULL,
        PRIMARY KEY (partner_id, destination)
      )`);
    await q.query(`CREATE INDEX failure_notices_due_idx ON failure_notices (window_ends_at) WHERE pending_count > 0`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE failure_notices`);
    await q.query(`DROP TABLE operational_events`);
    await q.query(
      `DELETE FROM callback_attempts WHERE callback_id IN (SELECT id FROM callbacks WHERE event_type IS NOT NULL)`,
    );
    await q.query(`DELETE FROM callbacks WHERE event_type IS NOT NULL`);
    await q.query(`ALTER TABLE callbacks DROP CONSTRAINT callbacks_kind_check, DROP COLUMN event_type`);
    await q.query(`ALTER TABLE callbacks ALTER COLUMN company_id SET NOT NULL, ALTER COLUMN message SET NOT NULL`);
  }
}
