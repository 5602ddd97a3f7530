import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { noteDue } from '../../platform/index.js';
import type { CallbackStatus } from '../callback-status.js';
import { BRINGS_PROBE_FORWARD, REDELIVERABLE, RedeliveryFacts } from '../redelivery-rules.js';
import { EVENT_WRITES, set } from './lifecycle.js';

/**
 * A fresh schedule, due now: admission takes it from here. A callback whose attempt is in flight
 * (`sending`) stays so: that attempt settles it, under the fresh schedule (settlement.ts).
 */
export const RESET = set(EVENT_WRITES.redeliver);

/** A callback's status and next attempt before and after a repair. */
export type Moved = {
  old_status: CallbackStatus;
  old_next: Date | null;
  status: CallbackStatus;
  next_attempt_at: Date | null;
};

/** The callbacks a redelivery may find: a partner's own ($2; an operator's: any), no operational event's delivery. */
const REDELIVERY_SCOPE = `c.id = $1 AND ($2::uuid IS NULL OR c.partner_id = $2) AND c.event_type IS NULL`;

export const LOCK_OPEN_DESTINATION = `SELECT 1 FROM destinations d
      WHERE d.key = (SELECT c.destination FROM callbacks c WHERE ${REDELIVERY_SCOPE})
        AND ${BRINGS_PROBE_FORWARD}
        FOR NO KEY UPDATE OF d`;

export const LOCK_FOR_REDELIVERY = `SELECT c.status, c.test, c.url_removed_at AS "urlRemovedAt"
       FROM callbacks c
      WHERE ${REDELIVERY_SCOPE}
        FOR UPDATE OF c`;

/**
 * A redelivery's request for its destination's next probe (redelivery-rules.ts, BRINGS_PROBE_FORWARD):
 * of the callbacks `picked` (rows with id, destination and seq), the oldest of each open
 * destination is asked to go as its probe; a request already there gives way to it.
 */
export const askProbes = (picked: string): string => `UPDATE destinations d SET probe_id = a.id
       FROM (SELECT DISTINCT ON (p.destination) p.destination, p.id FROM ${picked} p
              ORDER BY p.destination, p.seq) a
      WHERE d.key = a.destination AND ${BRINGS_PROBE_FORWARD}`;

export const ASK_PROBE = askProbes('(SELECT id, destination, seq FROM callbacks WHERE id = $1)');

/**
 * Locks the callbacks (those `when` holds for), changes them with `set`, and returns each one's status and
 * next attempt before and after.
 */
const moveStatement = (set: string, when: string): string =>
  `UPDATE callbacks c SET ${set}
       FROM (SELECT id AS old_id, status AS old_status, next_attempt_at AS old_next FROM callbacks
              WHERE id = ANY($1::uuid[]) ${when} FOR UPDATE) old
      WHERE c.id = old.old_id
      RETURNING old.old_status, old.old_next, c.status, c.next_attempt_at`;

/** A redelivery: its fresh schedule's first attempt is the redelivery's (restarted_by). */
export const RESTART = moveStatement(`${RESET}, restarted_by = 'redelivery'`, `AND ${REDELIVERABLE}`);
export const DUE_NOW = moveStatement(set(EVENT_WRITES['due now']), `AND status = 'pending'`);

async function move(m: EntityManager, statement: string, ids: string[]): Promise<Moved[]> {
  const [rows]: [Moved[], number] = await m.query(statement, [ids]);
  return rows;
}

/** A redelivery's and a repair's statements, in the repair's transaction. */
@Injectable()
export class RepairRepository {
  /**
   * Locks a redelivery's callback (another partner's, and an operational event's delivery, which is
   * read and listed as an event, are not found) and reads what its redelivery depends on
   * (redelivery-rules.ts). Its destination's row first, if its circuit is open (the redelivery then
   * asks for its next probe, askProbe): settlement writes a destination before its callbacks, and
   * so does this transaction, so the two never wait for each other in a circle.
   */
  async lockForRedelivery(
    m: EntityManager,
    id: string,
    partnerId: string | null,
  ): Promise<RedeliveryFacts | undefined> {
    await m.query(LOCK_OPEN_DESTINATION, [id, partnerId]);
    const [row]: RedeliveryFacts[] = await m.query(LOCK_FOR_REDELIVERY, [id, partnerId]);
    return row;
  }

  /** Asks, if its destination is open, for the redelivered callback to go as its next probe. */
  async askProbe(m: EntityManager, id: string): Promise<void> {
    await m.query(ASK_PROBE, [id]);
  }

  /** Restarts the callbacks' schedules (same ids: the same webhook-id), due now. */
  async restartSchedules(m: EntityManager, ids: string[]): Promise<Moved[]> {
    const rows = await move(m, RESTART, ids);
    noteDue(m, rows.length);
    return rows;
  }

  /** Makes pending callbacks due now, keeping their schedule. */
  async makeDueNow(m: EntityManager, ids: string[]): Promise<Moved[]> {
    const rows = await move(m, DUE_NOW, ids);
    noteDue(m, rows.length);
    return rows;
  }
}
