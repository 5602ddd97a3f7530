import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AuditChange, AuditLog } from '../audit/audit-log.js';
import { trackedValues } from '../audit/audit-changes.js';
import { notFound } from '../http/domain-error.js';
import type { Actor } from '../operators/actor.js';
import { CallbackStatus, shownStatus } from './callback-status.js';
import { CallbackRecorder } from './callback-recorder.js';
import { REDELIVERABLE, redeliveryRefusal } from './redelivery-rules.js';

/**
 * A fresh schedule, due now: admission takes it from here. A callback whose attempt is in flight
 * (`sending`) stays so: that attempt settles it, under the fresh schedule (settlement.ts).
 */
export const RESET = `status = CASE WHEN status = 'sending' THEN 'sending' ELSE 'pending' END, schedule_attempts = 0, schedule_started_at = now(), next_attempt_at = now(), delivered_at = NULL`;


type Moved = { old_status: CallbackStatus; old_next: Date | null; status: CallbackStatus; next_attempt_at: Date | null };

/**
 * An operator's repairs of the outbox (the API's redeliveries and the dashboard's Retry and
 * Promote): each one transaction with its audit entry, then admission is woken (the recorder's
 * after-commit hook).
 */
@Injectable()
export class CallbackRepairs {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly audit: AuditLog,
    private readonly callbacks: CallbackRecorder,
  ) {}

  /**
   * Sends a callback again from a fresh schedule (any status): same id, so the same `webhook-id`.
   * Not a test callback, nor one whose callback URL the partner removed (409: redelivery-rules.ts).
   */
  async redeliver(actor: Actor, id: string): Promise<void> {
    await this.db.transaction(async (m) => {
      const [row] = await this.move(m, RESET, [id], `AND ${REDELIVERABLE}`);
      if (!row) {
        const [found]: { url_removed_at: Date | null; status: CallbackStatus; test: boolean }[] = await m.query(`SELECT url_removed_at, status, test FROM callbacks WHERE id = $1`, [id]);
        if (!found) throw notFound('Callback');
        throw redeliveryRefusal({ test: found.test, urlRemovedAt: found.url_removed_at, status: found.status })!;
      }
      await this.audit.record(m, actor, {
        targetType: 'callback',
        targetId: id,
        before: trackedValues({ status: shownStatus(row.old_status), nextAttemptAt: row.old_next }),
        after: trackedValues({ status: shownStatus(row.status), nextAttemptAt: row.next_attempt_at }),
      });
    });
    this.callbacks.committed(1);
  }

  /** Redelivers every failed callback, optionally only those created since a time or of one company; how many. */
  async redeliverFailed(actor: Actor, f: { since?: Date; companyId?: string }): Promise<number> {
    const count = await this.db.transaction(async (m) => {
      const [rows]: [unknown[], number] = await m.query(
        `UPDATE callbacks SET ${RESET}
          WHERE status = 'failed' AND ${REDELIVERABLE} AND ($1::timestamptz IS NULL OR created_at >= $1) AND ($2::uuid IS NULL OR company_id = $2)
          RETURNING id`,
        [f.since ?? null, f.companyId ?? null],
      );
      await this.audit.record(m, actor, {
        targetType: 'callback',
        targetId: null,
        before: { status: 'failed' },
        after: trackedValues({ status: 'pending', count: rows.length, since: f.since ?? null, companyId: f.companyId ?? null }),
      });
      return rows.length;
    });
    this.callbacks.committed(count);
    return count;
  }

  /** Makes one pending callback due now, keeping its schedule (the dashboard's Promote); its entry names it. Not pending, nothing written. */
  async promote(actor: Actor, id: string): Promise<void> {
    await this.attemptNow(actor, [id], ([one]) => ({
      targetType: 'callback',
      targetId: id,
      before: trackedValues({ nextAttemptAt: one.old_next }),
      after: trackedValues({ nextAttemptAt: one.next_attempt_at }),
    }));
  }

  /** Makes a page of pending callbacks due now (the dashboard's Promote all); its entry counts them, however few. */
  async promotePage(actor: Actor, ids: string[]): Promise<void> {
    await this.attemptNow(actor, ids, (rows) => ({ targetType: 'callback', targetId: null, before: {}, after: { count: rows.length } }));
  }

  /**
   * Makes pending callbacks due now, keeping their schedule: admission sends them as soon as their
   * destination has room. Nothing promoted, nothing written.
   */
  private async attemptNow(actor: Actor, ids: string[], entry: (rows: Moved[]) => AuditChange): Promise<void> {
    const count = await this.db.transaction(async (m) => {
      const rows = await this.move(m, `next_attempt_at = now()`, ids, `AND status = 'pending'`);
      if (rows.length === 0) return 0;
      await this.audit.record(m, actor, entry(rows));
      return rows.length;
    });
    this.callbacks.committed(count);
  }

  /** Locks the callbacks, changes them with `set`, and returns each one's status and next attempt before and after. */
  private async move(m: EntityManager, set: string, ids: string[], when = ''): Promise<Moved[]> {
    const [rows]: [Moved[], number] = await m.query(
      `UPDATE callbacks c SET ${set}
         FROM (SELECT id AS old_id, status AS old_status, next_attempt_at AS old_next FROM callbacks WHERE id = ANY($1::uuid[]) ${when} FOR UPDATE) old
        WHERE c.id = old.old_id
        RETURNING old.old_status, old.old_next, c.status, c.next_attempt_at`,
      [ids],
    );
    return rows;
  }
}
