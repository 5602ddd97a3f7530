import { MigrationInterface, QueryRunner } from 'typeorm';
import { buildIndexConcurrently } from './concurrent-index.js';

/**
 * A partner's callback URLs list each URL's last delivery (GET /v1/callback-urls): one probe of this
 * index per URL, the newest entry of (partner, URL), however long ago that was and however many
 * other deliveries came since. Keyed on md5(url), so a URL of any length (2048 characters, and more
 * bytes when not ASCII) fits an index entry. Partial on `delivered`: a delivery's settlement writes
 * one more index entry, nothing else on the delivery path does (marking 50,000 callbacks delivered
 * in one statement: 1.65 s with it, 1.40 s without, on the development machine; a delivery's HTTP
 * request costs far more). test/callback-url-plans.e2e-spec.ts checks the read. Built
 * CONCURRENTLY, outside a transaction, so a large table keeps taking writes.
 */
export class UrlDeliveredIndex1764800200000 implements MigrationInterface {
  name = 'UrlDeliveredIndex1764800200000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    const on = `callbacks (partner_id, md5(url), delivered_at) WHERE status = 'delivered'`;
    await buildIndexConcurrently(q, 'callbacks_url_delivered_idx', on);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS callbacks_url_delivered_idx');
  }
}
