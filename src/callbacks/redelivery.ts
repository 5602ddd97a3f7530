import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { type Actor, AuditLog, trackedValues } from '../operators/index.js';
import { DomainError, notFound, TransactionRunner } from '../platform/index.js';
import { shownStatus } from './callback-status.js';
import { redeliveryOf, RedeliveryMove } from './redelivery-rules.js';
import { askProbe, lockForRedelivery, makeDueNow, Moved, restartSchedules } from './store/repairs.js';

/**
 * Who redelivers: an operator (any callback, audited), a partner (its own), or an operator in the
 * partner's portal (the partner's own, audited naming the operator).
 */
export type Redeliverer = { actor: Actor } | { partnerId: string } | { partnerId: string; actor: Actor };

/** Each move's statement (store/repairs.ts); one under way is left to its attempt. */
const STATEMENTS: Record<RedeliveryMove, (m: EntityManager, ids: string[]) => Promise<Moved[]>> = {
  fresh_schedule: restartSchedules,
  due_now: makeDueNow,
  under_way: () => Promise.resolve([]),
};

/**
 * The one redelivery path, for partners, operators, the portal's Redeliver and the dashboard's
 * Retry, under the one rule of redelivery-rules.ts: the same id (so the same `webhook-id`), a
 * settled one on a fresh schedule, a pending one due now; while its destination is open, it goes as
 * the next probe (brought forward). Refused (409) for a test callback or one whose URL was removed;
 * an operational event's delivery is no callback here (404). An operator's writes its audit entry
 * in the same transaction.
 */
@Injectable()
export class Redelivery {
  constructor(
    private readonly writes: TransactionRunner,
    private readonly audit: AuditLog,
  ) {}

  async redeliver(id: string, by: Redeliverer): Promise<void> {
    await this.writes.transaction(async (m) => {
      const facts = await lockForRedelivery(m, id, 'partnerId' in by ? by.partnerId : null);
      if (!facts) throw notFound('Callback');
      const move = redeliveryOf(facts);
      if (move instanceof DomainError) throw move;
      const [row] = await STATEMENTS[move](m, [id]);
      await askProbe(m, id);
      if ('actor' in by && row) {
        await this.audit.record(m, by.actor, {
          targetType: 'callback',
          targetId: id,
          before: trackedValues({ status: shownStatus(row.old_status), nextAttemptAt: row.old_next }),
          after: trackedValues({ status: shownStatus(row.status), nextAttemptAt: row.next_attempt_at }),
        });
      }
    });
  }
}
