import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { noteDue } from '../../platform/index.js';
import { DESTINATION_COLUMNS, DestinationRow } from './destination-states.js';

/**
 * Waiting callbacks are counted up to this many per destination: a scrape or a list stays cheap whatever the
 * backlog.
 */
export const WAITING_COUNT_CAP = 10_000;

/**
 * Destinations (each one partner's origin) with their counts, filtered by partner (`$1`) and
 * origin (`$2`), either null for all.
 */
export const LIST_DESTINATIONS = `
  SELECT ${DESTINATION_COLUMNS},
         (SELECT count(*) FROM callbacks c WHERE c.destination = d.key AND c.status = 'sending')::int AS sending,
         (SELECT count(*) FROM (SELECT 1 FROM callbacks c
                                 WHERE c.destination = d.key AND c.status = 'pending'
                                   AND c.next_attempt_at <= now()
                                 LIMIT ${WAITING_COUNT_CAP}) w)::int AS waiting,
         (extract(epoch FROM now()) * 1000)::float8 AS now
    FROM destinations d
   WHERE ($1::uuid IS NULL OR d.partner_id = $1) AND ($2::text IS NULL OR d.origin = $2)
   ORDER BY d.origin, d.partner_id`;

/** A destination as its list shows it: its state, its callbacks in flight and waiting, and PostgreSQL's clock (ms). */
export type DestinationListRow = DestinationRow & { sending: number; waiting: number; now: number };

/**
 * One partner's destinations at these origins ($1 the partner, $2 the origins), with their
 * callbacks in flight (an open circuit's probe under way is half-open): what their states are made
 * of, without the waiting counts. One range of `destinations_partner_idx` per origin.
 */
export const DESTINATION_STATES = `
  SELECT ${DESTINATION_COLUMNS},
         (SELECT count(*) FROM callbacks c WHERE c.destination = d.key AND c.status = 'sending')::int AS sending,
         (extract(epoch FROM now()) * 1000)::float8 AS now
    FROM destinations d
   WHERE d.partner_id = $1 AND d.origin = ANY($2::text[])`;

/** What an operator's probe did to one destination: its next probe time before and after. */
export type Probed = { partnerId: string; before: Date | null; after: Date };

export const COUNT_OPEN = `SELECT count(*)::int AS n FROM destinations WHERE opened_at IS NOT NULL`;

export const WAITING_BY_CIRCUIT = `SELECT d.opened_at IS NOT NULL AS open, count(*)::int AS n
       FROM destinations d, LATERAL (SELECT 1 FROM callbacks c
                                      WHERE c.destination = d.key AND c.status = 'pending'
                                        AND c.next_attempt_at <= now()
                                      LIMIT ${WAITING_COUNT_CAP}) w
      GROUP BY 1`;

export const PROBE_NOW = `UPDATE destinations d SET next_probe_at = now(), version = d.version + 1
       FROM (SELECT key AS k, next_probe_at AS before FROM destinations
              WHERE origin = $1 AND ($2::uuid IS NULL OR partner_id = $2) AND opened_at IS NOT NULL
              ORDER BY key FOR UPDATE) old
      WHERE d.key = old.k
      RETURNING d.partner_id AS "partnerId", old.before, d.next_probe_at AS after`;

/** Whether the origin has a destination (of that partner, or of any). */
export const KNOWN = `SELECT 1 FROM destinations WHERE origin = $1 AND ($2::uuid IS NULL OR partner_id = $2) LIMIT 1`;

/** Destinations' reads and an operator's probe: their lists, states and counts. */
@Injectable()
export class DestinationRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Destinations with their counts: every one, or one partner's, or those at one origin. */
  listDestinations(f: { partnerId: string | null; origin: string | null }): Promise<DestinationListRow[]> {
    return this.db.query(LIST_DESTINATIONS, [f.partnerId, f.origin]);
  }

  /**
   * The partner's destinations at these origins, with their callbacks in flight (those it has: a URL never
   * used has none).
   */
  destinationStates(
    partnerId: string,
    origins: string[],
  ): Promise<(DestinationRow & { sending: number; now: number })[]> {
    return this.db.query(DESTINATION_STATES, [partnerId, origins]);
  }

  /** Destinations whose circuit is open or half-open. */
  async countOpenDestinations(): Promise<number> {
    const [row]: { n: number }[] = await this.db.query(COUNT_OPEN);
    return row.n;
  }

  /**
   * Due callbacks waiting for their destination, behind an open circuit or for room in a window (each
   * destination counted up to the cap).
   */
  async countWaitingByCircuit(): Promise<{ open: number; closed: number }> {
    const rows: { open: boolean; n: number }[] = await this.db.query(WAITING_BY_CIRCUIT);
    return { open: rows.find((r) => r.open)?.n ?? 0, closed: rows.find((r) => !r.open)?.n ?? 0 };
  }

  /**
   * The probes of the open destinations at an origin (one partner's, or every partner's when
   * `partnerId` is null) due now (admission sends them within a second); or why none: no such
   * destination, or none of them open.
   */
  async probeNow(m: EntityManager, origin: string, partnerId: string | null): Promise<Probed[] | 'unknown' | 'closed'> {
    const [rows]: [Probed[], number] = await m.query(PROBE_NOW, [origin, partnerId]);
    if (rows.length > 0) {
      noteDue(m, rows.length);
      return rows;
    }
    const known: unknown[] = await m.query(KNOWN, [origin, partnerId]);
    return known.length === 0 ? 'unknown' : 'closed';
  }
}
