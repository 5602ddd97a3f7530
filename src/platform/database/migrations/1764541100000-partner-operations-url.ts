import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Where a partner's operational events go (`PATCH /v1/partner`): a URL checked as a callback URL
 * is, or null. A nullable column without a default: adding it rewrites nothing.
 */
export class PartnerOperationsUrl1764541100000 implements MigrationInterface {
  name = 'PartnerOperationsUrl1764541100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE partners ADD COLUMN operations_url text');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE partners DROP COLUMN operations_url');
  }
}
