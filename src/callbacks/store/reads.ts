import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull } from 'typeorm';
import type { Circuit, OpenCircuits } from '../circuit-wait.js';
import { Callback, CallbackAttempt } from '../callback.entity.js';
import { CallbackMessage } from '../callback-message.js';
import { CallbackStatus } from '../callback-status.js';

/** A list's conditions: all optional but the page size; `beforeSeq` is the keyset cursor. */
export interface CallbackListQuery {
  partnerId?: string;
  statuses?: CallbackStatus[];
  companyId?: string;
  /** The URL's origin, as `callback_origin` computes it (whatever a destination is keyed by). */
  origin?: string;
  message?: CallbackMessage;
  beforeSeq?: string;
  /** Created at or after this time (the portal's filter). */
  createdFrom?: Date;
  /** Created before this time. */
  createdTo?: Date;
  /** Rows to read (a page and one more, to know whether another follows). */
  rows: number;
}

export const OPEN_CIRCUITS = `SELECT d.key, (extract(epoch FROM d.opened_at) * 1000)::float8 AS "openedAt",
         (extract(epoch FROM d.next_probe_at) * 1000)::float8 AS "nextProbeAt", d.probe_id IS NOT NULL AS "probeAsked",
         (extract(epoch FROM now()) * 1000)::float8 AS now
    FROM destinations d WHERE d.key = ANY ($1::text[]) AND d.opened_at IS NOT NULL`;

/** Callbacks as lists and pages read them. */
@Injectable()
export class CallbackReadRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Callbacks newest first (by seq), on `callbacks_partner_seq_idx`, `callbacks_company_seq_idx` or
   * `callbacks_status_seq_idx`.
   */
  listCallbacks(q: CallbackListQuery): Promise<Callback[]> {
    // Operational events' deliveries are listed as events (operational-events/), not as callbacks.
    const b = this.db
      .getRepository(Callback)
      .createQueryBuilder('c')
      .where('c.event_type IS NULL')
      .orderBy('c.seq', 'DESC')
      .limit(q.rows);
    if (q.partnerId) b.andWhere('c.partner_id = :partnerId', { partnerId: q.partnerId });
    if (q.statuses) b.andWhere('c.status IN (:...statuses)', { statuses: q.statuses });
    if (q.companyId) b.andWhere('c.company_id = :companyId', { companyId: q.companyId });
    if (q.origin !== undefined) b.andWhere('callback_origin(c.url) = :origin', { origin: q.origin });
    if (q.message !== undefined) b.andWhere('c.message = :message', { message: q.message });
    if (q.beforeSeq !== undefined) b.andWhere('c.seq < :seq', { seq: q.beforeSeq });
    if (q.createdFrom) b.andWhere('c.created_at >= :createdFrom', { createdFrom: q.createdFrom });
    if (q.createdTo) b.andWhere('c.created_at < :createdTo', { createdTo: q.createdTo });
    return b.getMany();
  }

  /** One callback (a partner's own only, when `partnerId` is given) and its attempts, oldest first. */
  async callbackWithAttempts(
    id: string,
    partnerId?: string,
  ): Promise<{ callback: Callback; attempts: CallbackAttempt[] } | undefined> {
    const callback = await this.callback(id, partnerId);
    if (!callback) return undefined;
    return { callback, attempts: await this.attempts(id) };
  }

  /** One callback (not an operational event's delivery), a partner's own only when `partnerId` is given. */
  async callback(id: string, partnerId?: string): Promise<Callback | null> {
    return this.db
      .getRepository(Callback)
      .findOne({ where: partnerId ? { id, partnerId, eventType: IsNull() } : { id, eventType: IsNull() } });
  }

  /** A callback's attempts, oldest first. */
  async attempts(id: string): Promise<CallbackAttempt[]> {
    return this.db.getRepository(CallbackAttempt).find({ where: { callbackId: id }, order: { number: 'ASC' } });
  }

  /**
   * The open circuits among these destinations (a page's, by key: one primary-key probe each), with
   * PostgreSQL's clock: what the next attempt a page's callbacks show depends on (circuit-wait.ts).
   */
  async openCircuitsOf(keys: string[]): Promise<OpenCircuits> {
    if (keys.length === 0) return { now: Date.now(), byKey: new Map() };
    const rows: (Circuit & { key: string; now: number })[] = await this.db.query(OPEN_CIRCUITS, [[...new Set(keys)]]);
    const byKey = new Map<string, Circuit>();
    for (const r of rows)
      byKey.set(r.key, { openedAt: r.openedAt, nextProbeAt: r.nextProbeAt, probeAsked: r.probeAsked });
    return { now: rows[0]?.now ?? Date.now(), byKey };
  }
}
