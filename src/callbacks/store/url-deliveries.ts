import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/**
 * Each URL's last delivery among the partner's callbacks ($1 the partner, $2 the URLs): one probe of
 * `callbacks_url_delivered_idx (partner_id, md5(url), delivered_at)` per URL, its newest entry,
 * however long ago that was and however many deliveries came since. Test callbacks count: they
 * reached the URL too. A delivered callback is kept for CALLBACK_RETENTION; older ones are gone.
 */
export const LAST_DELIVERIES = `
  SELECT u.url,
         (SELECT c.delivered_at FROM callbacks c
           WHERE c.partner_id = $1 AND md5(c.url) = md5(u.url) AND c.url = u.url AND c.status = 'delivered'
           ORDER BY c.delivered_at DESC LIMIT 1) AS delivered_at
    FROM unnest($2::text[]) AS u(url)`;

type LastDeliveries = Map<string, Date | null>;

/** Each callback URL's last delivery. */
@Injectable()
export class UrlDeliveries {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The last delivery to each URL of the partner's, by URL (null: none within the retention). */
  async lastDeliveries(partnerId: string, urls: string[]): Promise<LastDeliveries> {
    const rows: { url: string; delivered_at: Date | null }[] = await this.db.query(LAST_DELIVERIES, [partnerId, urls]);
    return new Map(rows.map((r) => [r.url, r.delivered_at]));
  }
}
