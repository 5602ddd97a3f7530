import { Injectable } from '@nestjs/common';
import { type Actor, AuditChange, AuditLog, trackedValues } from '../operators/index.js';
import { TransactionRunner } from '../platform/index.js';
import { makeDueNow, Moved } from './store/repairs.js';

/**
 * An operator's Promote (the dashboard's): pending callbacks due now, keeping their schedule, each
 * one transaction with its audit entry; admission sends them as soon as their destination has room.
 * Redelivery is redelivery.ts.
 */
@Injectable()
export class CallbackRepairs {
  constructor(
    private readonly writes: TransactionRunner,
    private readonly audit: AuditLog,
  ) {}

  /** Makes one pending callback due now (the dashboard's Promote); its entry names it. Not pending, nothing written. */
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

  private async attemptNow(actor: Actor, ids: string[], entry: (rows: Moved[]) => AuditChange): Promise<void> {
    await this.writes.transaction(async (m) => {
      const rows = await makeDueNow(m, ids);
      if (rows.length > 0) await this.audit.record(m, actor, entry(rows));
    });
  }
}
