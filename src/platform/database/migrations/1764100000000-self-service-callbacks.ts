import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Partners' self-service (docs/partners.md): test callbacks, callback URLs that change, and the
 * callback feed.
 * - `test`: a test callback (POST /v1/callbacks/test); never in the feed.
 * - `attempt_limit`: the attempts its schedule allows when fewer than the deployment's schedule
 *   (a test callback: 1); NULL for every real callback (the whole schedule).
 * - `url_removed_at`: the partner removed the URL this callback was for; it cannot be redelivered.
 * - `xact`: the top-level transaction that recorded the row. The feed's position is (xact, seq),
 *   exposed once no transaction with a smaller id can still commit (docs/architecture.md, "The
 *   callback feed"). Rows recorded before this migration read as transaction 1, which no real
 *   transaction has (PostgreSQL hands out ids from 3): they come first, in insertion order. The
 *   constant default adds the column without rewriting the table; new rows take their
 *   transaction's id.
 */
export class SelfServiceCallbacks1764100000000 implements MigrationInterface {
  name = 'SelfServiceCallbacks1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE callbacks
        ADD COLUMN test boolean NOT NULL DEFAULT false,
        ADD COLUMN attempt_limit integer CHECK (attempt_limit > 0),
        ADD COLUMN url_removed_at timestamptz,
        ADD COLUMN xact xid8 NOT NULL DEFAULT '1'`);
    await q.query(`ALTER TABLE callbacks ALTER COLUMN xact SET DEFAULT pg_current_xact_id()`);
    // The INSERT trigger makes a new callback's destination known; a callback whose URL changes
    // (a partner moved its receiver) needs its new destination known too, for admission to find
    // it and the partner's destination list to show it. Row by row, and only for rows whose URL
    // an UPDATE actually changes: no other UPDATE of callbacks (admission, settlement) fires it.
    await q.query(`
      CREATE FUNCTION callbacks_note_moved_destination() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO destinations (origin) VALUES (NEW.destination) ON CONFLICT DO NOTHING;
        INSERT INTO callback_destinations (partner_id, origin)
          VALUES (NEW.partner_id, NEW.destination) ON CONFLICT DO NOTHING;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER callbacks_note_moved_destination AFTER UPDATE OF url ON callbacks
        FOR EACH ROW WHEN (OLD.url IS DISTINCT FROM NEW.url) EXECUTE FUNCTION callbacks_note_moved_destination()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER callbacks_note_moved_destination ON callbacks`);
    await q.query(`DROP FUNCTION callbacks_note_moved_destination()`);
    await q.query(
      `ALTER TABLE callbacks DROP COLUMN xact, DROP COLUMN url_removed_at, DROP COLUMN attempt_limit, DROP COLUMN test`,
    );
  }
}
