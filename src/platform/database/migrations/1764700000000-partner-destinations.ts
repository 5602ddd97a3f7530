import { MigrationInterface, QueryRunner } from 'typeorm';

/** The state columns of `destinations` (window, breaker, probe), copied as they are. */
const STATE = 'window_size, failures, opened_at, next_probe_at, probe_ms, last_error, last_ok_at, version';

/** The trigger functions that make a new or moved callback's destination known, per partner from now on. */
const NOTE_INSERTED = `
  CREATE OR REPLACE FUNCTION callbacks_note_destinations() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO destinations (key, partner_id, origin)
    SELECT DISTINCT destination, partner_id, callback_origin(url) FROM added WHERE destination IS NOT NULL
    ON CONFLICT DO NOTHING;
    RETURN NULL;
  END $$`;
const NOTE_MOVED = `
  CREATE OR REPLACE FUNCTION callbacks_note_moved_destination() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO destinations (key, partner_id, origin)
    VALUES (NEW.destination, NEW.partner_id, callback_origin(NEW.url)) ON CONFLICT DO NOTHING;
    RETURN NULL;
  END $$`;

/** The indexes on `callbacks.destination`, as they were built (1764000000000, 1764450000000). */
const INDEXES = [
  `CREATE INDEX callbacks_admission_idx ON callbacks (destination, next_attempt_at, seq) WHERE status = 'pending'`,
  `CREATE INDEX callbacks_pending_schedule_idx ON callbacks (destination, schedule_started_at)
    WHERE status = 'pending'`,
  `CREATE INDEX callbacks_sending_idx ON callbacks (destination, lease_until) WHERE status = 'sending'`,
];

/**
 * A destination is one partner's origin (docs/partners.md, "Destinations"): two partners whose
 * receivers share an origin have a window, a circuit and operational events each, so one's
 * failures never hold, fail or report the other's callbacks. Its key is one text value,
 * `<partner id> <origin>` (an origin never holds a space), so every statement still joins
 * callbacks to destinations on one equality (`c.destination = d.key`):
 * - `callbacks.destination` is generated as that key. PostgreSQL cannot change a generated
 *   expression: the column is dropped and added again, which rewrites the table under its lock, and
 *   its indexes are built again in the same transaction (nothing runs without them meanwhile).
 * - `destinations` is keyed by it, `partner_id` and `origin` beside it for lists and filters; each
 *   origin's state (window, failures, circuit, probe times, last error) is copied to every
 *   partner's destination at that origin, so an open circuit stays open for each of them.
 * - `callback_destinations` (which partner's callbacks went to which origin) is `destinations` itself now.
 * - `failure_notices.destination` becomes the key too (its partner_id already was per partner).
 */
export class PartnerDestinations1764700000000 implements MigrationInterface {
  name = 'PartnerDestinations1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE destinations RENAME COLUMN origin TO key`);
    await q.query(
      `ALTER TABLE destinations ADD COLUMN partner_id uuid REFERENCES partners (id), ADD COLUMN origin text`,
    );
    await q.query(`
      INSERT INTO destinations (key, partner_id, origin, ${STATE})
      SELECT cd.partner_id::text || ' ' || d.key, cd.partner_id, d.key, ${STATE.split(', ')
        .map((c) => `d.${c}`)
        .join(', ')}
        FROM callback_destinations cd JOIN destinations d ON d.key = cd.origin`);
    await q.query(`DELETE FROM destinations WHERE partner_id IS NULL`);
    // A partner's origin the old table knew without a state of its own: a fresh destination.
    await q.query(`INSERT INTO destinations (key, partner_id, origin)
      SELECT partner_id::text || ' ' || origin, partner_id, origin FROM callback_destinations ON CONFLICT DO NOTHING`);
    await q.query(`ALTER TABLE destinations ALTER COLUMN partner_id SET NOT NULL, ALTER COLUMN origin SET NOT NULL`);
    await q.query(
      `ALTER TABLE destinations ADD CONSTRAINT destinations_key_check CHECK (key = partner_id::text || ' ' || origin)`,
    );
    await q.query(`CREATE INDEX destinations_partner_idx ON destinations (partner_id, origin)`);
    await q.query(`CREATE INDEX destinations_origin_idx ON destinations (origin)`);

    await q.query(NOTE_INSERTED);
    await q.query(NOTE_MOVED);
    await q.query(`ALTER TABLE callbacks DROP COLUMN destination`);
    await q.query(`ALTER TABLE callbacks
      ADD COLUMN destination text GENERATED ALWAYS AS (partner_id::text || ' ' || callback_origin(url)) STORED`);
    for (const index of INDEXES) await q.query(index);
    // Every callback still to send has its destination (the trigger made them all; this makes sure).
    await q.query(`
      INSERT INTO destinations (key, partner_id, origin)
      SELECT DISTINCT destination, partner_id, callback_origin(url) FROM callbacks
      WHERE status IN ('pending', 'sending') ON CONFLICT DO NOTHING`);

    await q.query(`UPDATE failure_notices SET destination = partner_id::text || ' ' || destination`);
    await q.query(`DROP TABLE callback_destinations`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE callback_destinations (
        partner_id uuid NOT NULL REFERENCES partners(id),
        origin text NOT NULL,
        first_seen_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (partner_id, origin)
      )`);
    await q.query(`CREATE INDEX callback_destinations_origin_idx ON callback_destinations (origin)`);
    await q.query(`INSERT INTO callback_destinations (partner_id, origin) SELECT partner_id, origin FROM destinations`);
    await q.query(`UPDATE failure_notices SET destination = substr(destination, strpos(destination, ' ') + 1)`);
    await q.query(`
      CREATE OR REPLACE FUNCTION callbacks_note_destinations() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO destinations (origin) SELECT DISTINCT destination FROM added ON CONFLICT DO NOTHING;
        INSERT INTO callback_destinations (partner_id, origin)
          SELECT DISTINCT partner_id, destination FROM added ON CONFLICT DO NOTHING;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE OR REPLACE FUNCTION callbacks_note_moved_destination() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO destinations (origin) VALUES (NEW.destination) ON CONFLICT DO NOTHING;
        INSERT INTO callback_destinations (partner_id, origin)
          VALUES (NEW.partner_id, NEW.destination) ON CONFLICT DO NOTHING;
        RETURN NULL;
      END $$`);
    await q.query(`ALTER TABLE callbacks DROP COLUMN destination`);
    await q.query(
      `ALTER TABLE callbacks ADD COLUMN destination text GENERATED ALWAYS AS (callback_origin(url)) STORED`,
    );
    for (const index of INDEXES) await q.query(index);
    // One state per origin again: the partners' destinations at it folded into one, an open circuit first.
    await q.query(`CREATE TABLE origin_states AS SELECT DISTINCT ON (origin) origin, ${STATE} FROM destinations
      ORDER BY origin, opened_at DESC NULLS LAST, failures DESC`);
    await q.query(`DELETE FROM destinations`);
    await q.query(
      `ALTER TABLE destinations DROP CONSTRAINT destinations_key_check, DROP COLUMN partner_id, DROP COLUMN origin`,
    );
    await q.query(`ALTER TABLE destinations RENAME COLUMN key TO origin`);
    await q.query(`INSERT INTO destinations (origin, ${STATE}) SELECT origin, ${STATE} FROM origin_states`);
    await q.query(`DROP TABLE origin_states`);
  }
}
