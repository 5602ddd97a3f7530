import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DomainError, invalidProperty, notFound } from '../http/domain-error.js';
import { ErrorCode } from '../http/error-codes.js';
import { Callback, CallbackAttempt } from './callback.entity.js';
import { ShownStatus, storedStatuses } from './callback-status.js';
import { CallbackMessage } from './callback-message.js';
import { CallbackRecorder } from './callback-recorder.js';
import { RESET } from './callback-repairs.js';
import { REDELIVERABLE, redeliveryRefusal } from './redelivery-rules.js';

/**
 * Whose callbacks a caller may see and repair: an operator sees all (no scope), a partner only
 * its own, and another partner's callback is "not found" (its existence is not revealed).
 */
export interface CallbackScope {
  partnerId: string;
}

export interface CallbackFilter {
  status?: ShownStatus;
  companyId?: string;
  message?: CallbackMessage;
  limit: number;
  cursor?: string;
}

/** The cursor is the last row's sequence number, opaque to clients. */
const encodeCursor = (seq: string) => Buffer.from(`seq:${seq}`).toString('base64url');
const MAX_SEQ = 2n ** 63n - 1n; // bigint's upper bound: a larger number would be a 500 from PostgreSQL
export function decodeCursor(cursor: string): string {
  const m = /^seq:([1-9]\d{0,18})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  // Re-encoding must give the cursor back: Buffer.from skips characters outside base64url.
  if (!m || encodeCursor(m[1]) !== cursor || BigInt(m[1]) > MAX_SEQ) throw invalidProperty('cursor is not a cursor returned by this endpoint');
  return m[1];
}


/**
 * Reads and repairs of the outbox, for operators (all callbacks) and partners (their own, through
 * a scope): lists newest first, keyset-paginated.
 */
@Injectable()
export class CallbacksAdminService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly callbacks: CallbackRecorder,
  ) {}

  async list(f: CallbackFilter, scope?: CallbackScope): Promise<{ items: Callback[]; nextCursor: string | null }> {
    const q = this.db.getRepository(Callback).createQueryBuilder('c').orderBy('c.seq', 'DESC').limit(f.limit + 1);
    if (scope) q.andWhere('c.partner_id = :partnerId', { partnerId: scope.partnerId });
    if (f.status) q.andWhere('c.status IN (:...statuses)', { statuses: storedStatuses(f.status) });
    if (f.companyId) q.andWhere('c.company_id = :companyId', { companyId: f.companyId });
    if (f.message !== undefined) q.andWhere('c.message = :message', { message: f.message });
    if (f.cursor !== undefined) q.andWhere('c.seq < :seq', { seq: decodeCursor(f.cursor) });
    const rows = await q.getMany();
    const items = rows.slice(0, f.limit);
    return { items, nextCursor: rows.length > f.limit ? encodeCursor(items[items.length - 1].seq) : null };
  }

  /**
   * A partner's redelivery: sends a callback again from a fresh schedule, same id (so the same
   * `webhook-id`), attempts counted anew; the attempt log keeps the history. Only a delivered or
   * failed one (a pending or sending one is still on its schedule: 409). An operator's, which may
   * restart any callback and is audited, is CallbackRepairs.redeliver.
   */
  async redeliver(id: string, scope: CallbackScope): Promise<void> {
    // TypeORM answers an UPDATE with [rows, rowCount].
    const [rows]: [unknown[], number] = await this.db.query(
      `UPDATE callbacks SET ${RESET}
        WHERE id = $1 AND ${REDELIVERABLE} AND ($2::uuid IS NULL OR (partner_id = $2 AND status IN ('delivered', 'failed'))) RETURNING id`,
      [id, scope?.partnerId ?? null],
    );
    if (rows.length === 0) {
      const { callback } = await this.get(id, scope); // 404 when absent or another partner's
      const refusal = redeliveryRefusal(callback);
      if (refusal) throw refusal;
      // Settled between the two statements: it may be redelivered now.
      if (callback.status === 'delivered' || callback.status === 'failed') return this.redeliver(id, scope);
      throw new DomainError('conflict', ErrorCode.callback_still_pending, 'Callback cannot be redelivered: its current status is pending');
    }
    this.callbacks.committed(rows.length);
  }

  async get(id: string, scope?: CallbackScope): Promise<{ callback: Callback; attempts: CallbackAttempt[] }> {
    const callback = await this.db.getRepository(Callback).findOne({ where: scope ? { id, partnerId: scope.partnerId } : { id } });
    if (!callback) throw notFound('Callback');
    const attempts = await this.db.getRepository(CallbackAttempt).find({ where: { callbackId: id }, order: { number: 'ASC' } });
    return { callback, attempts };
  }
}
