import { MigrationInterface, QueryRunner } from 'typeorm';

const TYPES = ['destination.failing', 'destination.recovered', 'callbacks.failed'];
const check = (types: string[]) => `CHECK (type IN (${types.map((t) => `'${t}'`).join(', ')}))`;

/**
 * `operations.test`: a test event a partner sends to its Operations URL from the portal's
 * Settings (an operational event like the others, sent once). The type's check takes it; NOT VALID
 * then VALIDATE: the check reads the table without blocking its writes meanwhile. Reverted, the
 * test events and their deliveries go (their attempts with them) before the old check returns.
 */
export class TestEvents1764820000000 implements MigrationInterface {
  name = 'TestEvents1764820000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE operational_events DROP CONSTRAINT operational_events_type_check,
                   ADD CONSTRAINT operational_events_type_check ${check([...TYPES, 'operations.test'])} NOT VALID`);
    await q.query('ALTER TABLE operational_events VALIDATE CONSTRAINT operational_events_type_check');
  }

  async down(q: QueryRunner): Promise<void> {
    const tests = `SELECT id FROM operational_events WHERE type = 'operations.test'`;
    await q.query(`DELETE FROM callback_attempts WHERE callback_id IN (${tests})`);
    await q.query(`DELETE FROM callbacks WHERE id IN (${tests})`);
    await q.query(`DELETE FROM operational_events WHERE type = 'operations.test'`);
    await q.query(`ALTER TABLE operational_events DROP CONSTRAINT operational_events_type_check,
                   ADD CONSTRAINT operational_events_type_check ${check(TYPES)}`);
  }
}
