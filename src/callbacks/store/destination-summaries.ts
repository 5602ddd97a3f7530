import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/**
 * What operators and the alert rules see of destinations at a glance: each partner's counts, and
 * the few destinations open the longest, with their partner's name. Open means not closed (open or
 * half-open: `opened_at` set), as funding_destinations_open counts them.
 */

/** Each listed partner's destinations ($1: their ids): open and in all, by `destinations_partner_idx`. */
export const DESTINATIONS_BY_PARTNER = `
  SELECT partner_id, count(*) FILTER (WHERE opened_at IS NOT NULL)::int AS open, count(*)::int AS total
    FROM destinations WHERE partner_id = ANY($1::uuid[]) GROUP BY partner_id`;

/**
 * The $1 destinations open the longest, longest first (ties by key): a range of
 * `destinations_open_idx`, which holds the open ones only, and each one's partner by its key.
 */
export const LONGEST_OPEN = `
  SELECT p.name AS partner, d.partner_id, d.origin, extract(epoch FROM now() - d.opened_at)::float8 AS seconds
    FROM destinations d JOIN partners p ON p.id = d.partner_id
   WHERE d.opened_at IS NOT NULL
   ORDER BY d.opened_at, d.key
   LIMIT $1`;

export interface DestinationCounts {
  open: number;
  total: number;
}

/** An open destination as the alert gauge names it: its partner's name and id, its origin, for how long. */
export interface OpenDestination {
  partner: string;
  partner_id: string;
  origin: string;
  seconds: number;
}

/** What operators and the alert rules see of destinations at a glance. */
@Injectable()
export class DestinationSummaries {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Each partner's destinations, open and in all (zero for a partner with none), by partner id. */
  async destinationCounts(partnerIds: string[]): Promise<Map<string, DestinationCounts>> {
    if (partnerIds.length === 0) return new Map();
    const rows: ({ partner_id: string } & DestinationCounts)[] = await this.db.query(DESTINATIONS_BY_PARTNER, [
      partnerIds,
    ]);
    const counts = new Map(rows.map((r) => [r.partner_id, { open: r.open, total: r.total }]));
    return new Map(partnerIds.map((id) => [id, counts.get(id) ?? { open: 0, total: 0 }]));
  }

  /** The `n` destinations open the longest, longest first. */
  longestOpenDestinations(n: number): Promise<OpenDestination[]> {
    return this.db.query(LONGEST_OPEN, [n]);
  }
}
