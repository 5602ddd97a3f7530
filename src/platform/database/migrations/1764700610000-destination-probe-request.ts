import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A destination remembers the callback a person asked to go as its next probe (`probe_id`): a
 * manual redelivery of a callback whose destination's circuit is open brings the probe forward
 * (src/callbacks/redelivery.ts). Admission takes that callback as the probe as soon as nothing is in
 * flight there, and clears the request as it admits a probe (src/delivery/admission.ts); a closing
 * clears it too. No foreign key: retention deletes callbacks, and an id whose callback is gone or
 * no longer waits there only makes the destination's next callback its probe, once.
 * Adding a nullable column without a default rewrites nothing: older processes keep running.
 */
export class DestinationProbeRequest1764700610000 implements MigrationInterface {
  name = 'DestinationProbeRequest1764700610000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE destinations ADD COLUMN probe_id uuid');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE destinations DROP COLUMN probe_id');
  }
}
