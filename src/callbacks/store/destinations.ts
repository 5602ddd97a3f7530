import { DataSource, EntityManager } from 'typeorm';
import { noteDue } from '../../database/writes.js';
import { DESTINATION_COLUMNS, DestinationRow } from './destination-states.js';

/** Waiting callbacks are counted up to this many per destination: a scrape or a list stays cheap whatever the backlog. */
export const WAITING_COUNT_CAP = 10_000;

/**
 * Destinations with their counts. `$1` scopes the counts (and the list) to one partner's
 * callbacks, or to all when null; the circuit is the destination's, whoever's callbacks probe it.
 */
const LIST = `
  SELECT ${DESTINATION_COLUMNS},
         (SELECT count(*) FROM callbacks c WHERE c.destination = d.origin AND c.status = 'sending')::int AS sending,
         (SELECT count(*) FROM callbacks c WHERE c.destination = d.origin AND c.status = 'sending' AND ($1::uuid IS NULL OR c.partner_id = $1))::int AS in_flight,
         (SELECT count(*) FROM (SELECT 1 FROM callbacks c
                                 WHERE c.destination = d.origin AND c.status = 'pending' AND c.next_attempt_at <= now()
                                   AND ($1::uuid IS NULL OR c.partner_id = $1) LIMIT ${WAITING_COUNT_CAP}) w)::int AS waiting
    FROM destinations d
   WHERE d.origin IN (SELECT origin FROM callback_destinations WHERE $1::uuid IS NULL OR partner_id = $1)
   ORDER BY d.origin`;

/** A destination as its list shows it: its state, and its callbacks in flight and waiting. */
export type DestinationListRow = DestinationRow & { sending: number; in_flight: number; waiting: number };

/** Destinations with their counts: every one, or (`partnerId`) those the partner's callbacks went to, counting only its own. */
export function listDestinations(db: DataSource, partnerId: string | null): Promise<DestinationListRow[]> {
  return db.query(LIST, [partnerId]);
}

/** Destinations whose circuit is open or half-open. */
export async function countOpenDestinations(db: DataSource): Promise<number> {
  const [row]: { n: number }[] = await db.query(`SELECT count(*)::int AS n FROM destinations WHERE opened_at IS NOT NULL`);
  return row.n;
}

/** Due callbacks waiting for their destination, behind an open circuit or for room in a window (each destination counted up to the cap). */
export async function countWaitingByCircuit(db: DataSource): Promise<{ open: number; closed: number }> {
  const rows: { open: boolean; n: number }[] = await db.query(
    `SELECT d.opened_at IS NOT NULL AS open, count(*)::int AS n
       FROM destinations d, LATERAL (SELECT 1 FROM callbacks c WHERE c.destination = d.origin AND c.status = 'pending' AND c.next_attempt_at <= now() LIMIT ${WAITING_COUNT_CAP}) w
      GROUP BY 1`,
  );
  return { open: rows.find((r) => r.open)?.n ?? 0, closed: rows.find((r) => !r.open)?.n ?? 0 };
}

/**
 * An open destination's probe due now (admission sends it within a second); its next probe time
 * before and after, or why not: no such destination, or its circuit is closed.
 */
export async function probeNow(m: EntityManager, origin: string): Promise<{ before: Date | null; after: Date } | 'unknown' | 'closed'> {
  const [rows]: [{ before: Date | null; after: Date }[], number] = await m.query(
    `UPDATE destinations d SET next_probe_at = now(), version = d.version + 1
       FROM (SELECT origin AS o, next_probe_at AS before FROM destinations WHERE origin = $1 AND opened_at IS NOT NULL FOR UPDATE) old
      WHERE d.origin = old.o
      RETURNING old.before, d.next_probe_at AS after`,
    [origin],
  );
  if (rows.length > 0) {
    noteDue(m, 1);
    return rows[0];
  }
  const known: unknown[] = await m.query(`SELECT 1 FROM destinations WHERE origin = $1`, [origin]);
  return known.length === 0 ? 'unknown' : 'closed';
}
