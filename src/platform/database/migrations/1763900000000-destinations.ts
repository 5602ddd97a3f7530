import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Isolation between destinations (a callback URL's origin): every callback knows its
 * destination; a callback whose destination has no room or an open circuit waits `parked` in
 * PostgreSQL (out of the queue) until the destination can take it; the partners' destinations are
 * listed from `callback_destinations`.
 */
export class Destinations1763900000000 implements MigrationInterface {
  name = 'Destinations1763900000000';

  async up(q: QueryRunner): Promise<void> {
    // The destination is derived from the URL by the database itself, so every writer of
    // callbacks (the recorder, an operator's bulk load) gets it right. For URLs in WHATWG
    // serialisation (what registration stores) this is exactly the origin: scheme://host[:port],
    // lower-case, default port omitted (src/callbacks/callback-destination.ts says the same in
    // TypeScript; a test holds the two together).
    await q.query(`
      CREATE FUNCTION callback_origin(url text) RETURNS text
      LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURNS NULL ON NULL INPUT AS $$
        SELECT regexp_replace(regexp_replace(
                 coalesce(lower(substring(url from '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*')), url),
                 '^(https://.*):443$', '\\1'),
               '^(http://.*):80$', '\\1')
      $$`);
    await q.query(
      `ALTER TABLE callbacks ADD COLUMN destination text GENERATED ALWAYS AS (callback_origin(url)) STORED`,
    );
    await q.query(`ALTER TABLE callbacks ADD COLUMN parked_at timestamptz`);
    // The schedule's start: creation, or the last redelivery. A callback still parked when its
    // schedule would have ended fails.
    await q.query(`ALTER TABLE callbacks ADD COLUMN schedule_started_at timestamptz`);
    await q.query(`UPDATE callbacks SET schedule_started_at = created_at`);
    await q.query(`ALTER TABLE callbacks
      ALTER COLUMN schedule_started_at SET NOT NULL, ALTER COLUMN schedule_started_at SET DEFAULT now()`);

    // The relay's claim skips parked rows: they cost nothing while they wait.
    await q.query(`DROP INDEX callbacks_unenqueued_idx`);
    await q.query(`CREATE INDEX callbacks_unenqueued_idx ON callbacks (seq)
      WHERE status = 'pending' AND enqueued_at IS NULL AND parked_at IS NULL`);
    // Resuming a destination takes its oldest parked rows; the expiry sweep reads the oldest schedules.
    await q.query(`CREATE INDEX callbacks_parked_idx ON callbacks (destination, seq)
      WHERE status = 'pending' AND parked_at IS NOT NULL`);
    await q.query(`CREATE INDEX callbacks_parked_schedule_idx ON callbacks (schedule_started_at)
      WHERE status = 'pending' AND parked_at IS NOT NULL`);

    await q.query(`
      CREATE TABLE callback_destinations (
        partner_id uuid NOT NULL REFERENCES partners(id),
        origin text NOT NULL,
        first_seen_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (partner_id, origin)
      )`);
    await q.query(`CREATE INDEX callback_destinations_origin_idx ON callback_destinations (origin)`);
    await q.query(
      `INSERT INTO callback_destinations (partner_id, origin) SELECT DISTINCT partner_id, destination FROM callbacks`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE callback_destinations`);
    await q.query(`DROP INDEX callbacks_parked_schedule_idx`);
    await q.query(`DROP INDEX callbacks_parked_idx`);
    await q.query(`DROP INDEX callbacks_unenqueued_idx`);
    await q.query(
      `ALTER TABLE callbacks DROP COLUMN schedule_started_at, DROP COLUMN parked_at, DROP COLUMN destination`,
    );
    await q.query(`DROP FUNCTION callback_origin(text)`);
    await q.query(
      `CREATE INDEX callbacks_unenqueued_idx ON callbacks (seq) WHERE status = 'pending' AND enqueued_at IS NULL`,
    );
  }
}
