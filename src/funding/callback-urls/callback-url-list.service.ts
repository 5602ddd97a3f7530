import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { callbackOrigin, CircuitState, DestinationCircuits, UrlDeliveries } from '../../callbacks/index.js';

/** The list's bound: a partner usually has a handful of URLs; one per resource would be 100,000s. */
export const CALLBACK_URL_LIST_LIMIT = 1000;

/**
 * The partner's URLs in use ($1) and how many resources use each, most used first, then by URL, at
 * most $2: each resource once per URL (a withdrawal request with both properties on one URL is one).
 * A read of every resource of the partner (docs/architecture.md, "Changing a callback URL").
 */
export const URLS_IN_USE = `
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

export interface CallbackUrlView {
  url: string;
  resources: number;
  destination: { origin: string; state: CircuitState };
  lastDeliveredAt: string | null;
}

/**
 * A partner's callback URLs in use (GET /v1/callback-urls, the portal's URLs page): the URLs are
 * this module's (its resources' properties); each one's destination state is the delivery
 * module's (DestinationCircuits) and its last delivery the callback store's.
 */
@Injectable()
export class CallbackUrlList {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly circuits: DestinationCircuits,
    private readonly deliveries: UrlDeliveries,
  ) {}

  async list(partnerId: string): Promise<CallbackUrlView[]> {
    const uses: { url: string; resources: number }[] = await this.db.query(URLS_IN_USE, [
      partnerId,
      CALLBACK_URL_LIST_LIMIT,
    ]);
    const urls = uses.map((u) => u.url);
    const [states, delivered] = await Promise.all([
      this.circuits.statesOf(partnerId, [...new Set(urls.map(callbackOrigin))]),
      this.deliveries.lastDeliveries(partnerId, urls),
    ]);
    return uses.map(({ url, resources }) => {
      const origin = callbackOrigin(url);
      const lastDeliveredAt = delivered.get(url)?.toISOString() ?? null;
      return { url, resources, destination: { origin, state: states.get(origin)! }, lastDeliveredAt };
    });
  }
}
