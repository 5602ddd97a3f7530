import { EntityManager } from 'typeorm';
import { noteDue } from '../../platform/index.js';
import type { CallbackStatus } from '../callback-status.js';
import { REDELIVERABLE, RedeliveryFacts } from '../redelivery-rules.js';
import { EVENT_WRITES, set } from './lifecycle.js';

/**
 * A fresh schedule, due now: admission takes it from here. A callback whose attempt is in flight
 * (`sending`) stays so: that attempt settles it, under the fresh schedule (settlement.ts).
 */
export const RESET = set(EVENT_WRITES.redeliver);

/** A callback's status and next attempt before and after a repair. */
export type Moved = { old_status: CallbackStatus; old_next: Date | null; status: CallbackStatus; next_attempt_at: Date | null };

/**
 * Locks the callback (another partner's is not found) and reads what its redelivery depends on
 * (redelivery-rules.ts), its destination's circuit included.
 */
export async function lockForRedelivery(m: EntityManager, id: string, partnerId: string | null): Promise<RedeliveryFacts | undefined> {
  const [row]: RedeliveryFacts[] = await m.query(LOCK_FOR_REDELIVERY, [id, partnerId]);
  return row;
}

export const LOCK_FOR_REDELIVERY = `SELECT c.status, c.test, c.url_removed_at AS "urlRemovedAt", callback_origin(c.url) AS origin, d.opened_at AS "openedAt", d.next_probe_at AS "nextProbeAt"
       FROM callbacks c LEFT JOIN destinations d ON d.key = c.destination
      WHERE c.id = $1 AND ($2::uuid IS NULL OR c.partner_id = $2)
        FOR UPDATE OF c`;

/** Restarts the callbacks' schedules (same ids: the same webhook-id), due now. */
export async function restartSchedules(m: EntityManager, ids: string[]): Promise<Moved[]> {
  const rows = await move(m, RESTART, ids);
  noteDue(m, rows.length);
  return rows;
}

/** Makes pending callbacks due now, keeping their schedule. */
export async function makeDueNow(m: EntityManager, ids: string[]): Promise<Moved[]> {
  const rows = await move(m, DUE_NOW, ids);
  noteDue(m, rows.length);
  return rows;
}

/** Locks the callbacks (those `when` holds for), changes them with `set`, and returns each one's status and next attempt before and after. */
const moveStatement = (set: string, when: string): string =>
  `UPDATE callbacks c SET ${set}
       FROM (SELECT id AS old_id, status AS old_status, next_attempt_at AS old_next FROM callbacks WHERE id = ANY($1::uuid[]) ${when} FOR UPDATE) old
      WHERE c.id = old.old_id
      RETURNING old.old_status, old.old_next, c.status, c.next_attempt_at`;

export const RESTART = moveStatement(RESET, `AND ${REDELIVERABLE}`);
export const DUE_NOW = moveStatement(set(EVENT_WRITES['due now']), `AND status = 'pending'`);

async function move(m: EntityManager, statement: string, ids: string[]): Promise<Moved[]> {
  const [rows]: [Moved[], number] = await m.query(statement, [ids]);
  return rows;
}
