import { Injectable } from '@nestjs/common';
import { AuditLog } from '../audit/audit-log.js';
import { trackedValues } from '../audit/audit-changes.js';
import { Writes } from '../database/writes.js';
import { DomainError, notFound } from '../http/domain-error.js';
import { ErrorCode } from '../http/error-codes.js';
import type { Actor } from '../operators/actor.js';
import { shownStatus } from './callback-status.js';
import { redeliveryRefusal } from './redelivery-rules.js';
import { lockForRedelivery, restartFailed, restartSchedules } from './store/repairs.js';

/** Who redelivers: an operator (any callback, audited), or a partner (its own, once settled). */
export type Redeliverer = { actor: Actor } | { partnerId: string };

/**
 * The one redelivery path, for partners, operators and the dashboard's Retry: the same id (so the
 * same `webhook-id`) on a fresh schedule, due now. Never a test callback nor one whose URL was
 * removed (redelivery-rules.ts); a partner's only when delivered or failed (a pending one is still
 * on its schedule). An operator's writes its audit entry in the same transaction.
 */
@Injectable()
export class Redelivery {
  constructor(
    private readonly writes: Writes,
    private readonly audit: AuditLog,
  ) {}

  async redeliver(id: string, by: Redeliverer): Promise<void> {
    await this.writes.transaction(async (m) => {
      const facts = await lockForRedelivery(m, id, 'partnerId' in by ? by.partnerId : null);
      if (!facts) throw notFound('Callback');
      const refusal = redeliveryRefusal(facts);
      if (refusal) throw refusal;
      if ('partnerId' in by && shownStatus(facts.status) === 'pending') {
        throw new DomainError('conflict', ErrorCode.callback_still_pending, 'Callback cannot be redelivered: its current status is pending');
      }
      const [row] = await restartSchedules(m, [id]);
      if ('actor' in by) {
        await this.audit.record(m, by.actor, {
          targetType: 'callback',
          targetId: id,
          before: trackedValues({ status: shownStatus(row.old_status), nextAttemptAt: row.old_next }),
          after: trackedValues({ status: shownStatus(row.status), nextAttemptAt: row.next_attempt_at }),
        });
      }
    });
  }

  /** An operator's bulk redelivery of every failed callback (created since a time, of one company); how many. One entry. */
  redeliverFailed(actor: Actor, f: { since?: Date; companyId?: string }): Promise<number> {
    return this.writes.transaction(async (m) => {
      const count = await restartFailed(m, f);
      await this.audit.record(m, actor, {
        targetType: 'callback',
        targetId: null,
        before: { status: 'failed' },
        after: trackedValues({ status: 'pending', count, since: f.since ?? null, companyId: f.companyId ?? null }),
      });
      return count;
    });
  }
}
