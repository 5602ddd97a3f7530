import { Injectable } from '@nestjs/common';
import { PartnerDirectory } from '../../partners/index.js';
import { EventRow, OperationalEventRepository } from '../store/operational-events.js';
import { shownStatus } from '../callback-status.js';
import { invalidProperty, notFound } from '../../platform/index.js';
import { OperationalEventType, OperationalEventView } from './operational-event.js';

const encodeCursor = (seq: string) => Buffer.from(`event:${seq}`).toString('base64url');
function decodeCursor(cursor: string): string {
  const m = /^event:([1-9]\d{0,17})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m || encodeCursor(m[1]) !== cursor) throw invalidProperty('cursor is not a cursor returned by this endpoint');
  return m[1];
}

function view(r: EventRow): OperationalEventView {
  return {
    id: r.id,
    type: r.type as OperationalEventType,
    timestamp: r.timestamp,
    data: r.data,
    status: r.status === null ? 'not_sent' : shownStatus(r.status as 'pending' | 'sending' | 'delivered' | 'failed'),
    attemptCount: r.attemptCount ?? 0,
    lastError: r.lastError,
    deliveredAt: r.deliveredAt?.toISOString() ?? null,
  };
}

/** A partner's operational events, newest first, for the partner and for operators. */
@Injectable()
export class OperationalEvents {
  constructor(
    private readonly directory: PartnerDirectory,
    private readonly events: OperationalEventRepository,
  ) {}

  /** An operator's read of one partner's events: an unknown partner is 404. */
  async listOfPartner(
    partnerId: string,
    q: { type?: string; limit: number; cursor?: string },
  ): Promise<{ items: OperationalEventView[]; nextCursor: string | null }> {
    if (!(await this.directory.exists(partnerId))) throw notFound('Partner');
    return this.list(partnerId, q);
  }

  async list(
    partnerId: string,
    q: { type?: string; limit: number; cursor?: string },
  ): Promise<{ items: OperationalEventView[]; nextCursor: string | null }> {
    const rows = await this.events.listEvents({
      partnerId,
      type: q.type,
      beforeSeq: q.cursor === undefined ? undefined : decodeCursor(q.cursor),
      rows: q.limit + 1,
    });
    const page = rows.slice(0, q.limit);
    return {
      items: page.map(view),
      nextCursor: rows.length > q.limit ? encodeCursor(page[page.length - 1].seq) : null,
    };
  }
}
