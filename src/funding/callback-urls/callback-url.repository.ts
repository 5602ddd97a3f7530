import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/**
 * The partner's URLs in use ($1) and how many resources use each, most used first, then by URL, at
 * most $2: each resource once per URL (a withdrawal request with both properties on one URL is one).
 * A read of every resource of the partner (docs/architecture.md, "Changing a callback URL").
 */
const URLS_IN_USE = `
  WITH uses AS (
    SELECT c.callback_url AS url FROM companies c WHERE c.partner_id = $1 AND c.callback_url IS NOT NULL
    UNION ALL
    SELECT l.status_callback FROM limit_requests l JOIN companies c ON c.id = l.company_id
     WHERE c.partner_id = $1 AND l.status_callback IS NOT NULL
    UNION ALL
    SELECT u.url FROM withdrawal_requests w JOIN companies c ON c.id = w.company_id
         CROSS JOIN LATERAL (SELECT w.status_callback UNION SELECT w.loan_status_callback) u(url)
     WHERE c.partner_id = $1 AND u.url IS NOT NULL)
  SELECT url, count(*)::int AS resources FROM uses GROUP BY url ORDER BY resources DESC, url LIMIT $2`;

/** The statements of the callback URL inventory (callback-url-list.service.ts). */
@Injectable()
export class CallbackUrlRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The partner's URLs in use, with how many resources use each, at most `limit`. */
  inUse(partnerId: string, limit: number): Promise<{ url: string; resources: number }[]> {
    return this.db.query(URLS_IN_USE, [partnerId, limit]);
  }
}
