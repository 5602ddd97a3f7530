import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each attempt carries its callback's partner, so the portal's last-24-hours chart reads one
 * range of `callback_attempts_partner_started_idx (partner_id, started_at)`: that partner's attempts
 * of the day, not every partner's (src/callbacks/store/portal-activity.ts). The index replaces
 * `callback_attempts_started_idx`, which only that chart read: an attempt's insert (the delivery
 * path) maintains as many indexes as it did with the portal's.
 * The column is a copy of `callbacks.partner_id` (a callback never changes partner), written by the
 * statement that records the attempt; no foreign key of its own, which every insert would check
 * against `partners` (the callback's key already holds it).
 * In one transaction: the backfill, NOT NULL and the index commit together or not at all. Older
 * processes insert attempts without the column, so they are stopped first (docs/operations.md,
 * "Upgrades"), and nothing writes the table meanwhile.
 */
export class AttemptPartner1764700500000 implements MigrationInterface {
  name = 'AttemptPartner1764700500000';

  async up(q: QueryRunner): Promise<void> {
    // Dropped before the backfill, which would otherwise write every row's entry in it again.
    await q.query('DROP INDEX IF EXISTS callback_attempts_started_idx');
    await q.query('ALTER TABLE callback_attempts ADD COLUMN partner_id uuid');
    await q.query(
      'UPDATE callback_attempts a SET partner_id = c.partner_id FROM callbacks c WHERE c.id = a.callback_id',
    );
    await q.query('ALTER TABLE callback_attempts ALTER COLUMN partner_id SET NOT NULL');
    await q.query('CREATE INDEX callback_attempts_partner_started_idx ON callback_attempts (partner_id, started_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX IF EXISTS callback_attempts_partner_started_idx');
    await q.query('ALTER TABLE callback_attempts DROP COLUMN partner_id');
    await q.query('CREATE INDEX callback_attempts_started_idx ON callback_attempts (started_at)');
  }
}
