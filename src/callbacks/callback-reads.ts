import { Injectable } from '@nestjs/common';
import { invalidProperty, notFound } from '../platform/index.js';
import { Callback, CallbackAttempt } from './callback.entity.js';
import { ShownStatus, storedStatuses } from './callback-status.js';
import { CallbackMessage } from './callback-message.js';
import type { OpenCircuits } from './circuit-wait.js';
import { CallbackReadRepository } from './store/reads.js';

/**
 * Whose callbacks a caller may see and repair: an operator sees all (no scope), a partner only
 * its own, and another partner's callback is "not found" (its existence is not revealed).
 */
export interface CallbackScope {
  partnerId: string;
}

export interface CallbackFilter {
  status?: ShownStatus;
  /** An operator's filter (a partner's scope is its own). */
  partnerId?: string;
  companyId?: string;
  /** A callback URL's origin. */
  destination?: string;
  message?: CallbackMessage;
  /** Created at or after / before (the portal's filters; the API lists by cursor alone). */
  from?: Date;
  to?: Date;
  limit: number;
  cursor?: string;
}

/** A page of callbacks, and the open circuits they may wait behind (callbackView shows their next attempt by them). */
export type CallbackPage = { items: Callback[]; nextCursor: string | null; open: OpenCircuits };
/** One callback, its attempts, and its destination's circuit if it is open. */
export type CallbackWithAttempts = { callback: Callback; attempts: CallbackAttempt[]; open: OpenCircuits };

/** The cursor is the last row's sequence number, opaque to clients. */
const encodeCursor = (seq: string) => Buffer.from(`seq:${seq}`).toString('base64url');
const MAX_SEQ = 2n ** 63n - 1n; // bigint's upper bound: a larger number would be a 500 from PostgreSQL
export function decodeCursor(cursor: string): string {
  const m = /^seq:([1-9]\d{0,18})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  // Re-encoding must give the cursor back: Buffer.from skips characters outside base64url.
  if (!m || encodeCursor(m[1]) !== cursor || BigInt(m[1]) > MAX_SEQ)
    throw invalidProperty('cursor is not a cursor returned by this endpoint');
  return m[1];
}

/**
 * The delivery log, for operators (all callbacks) and partners (their own, through a scope):
 * lists newest first, keyset-paginated.
 */
@Injectable()
export class CallbackReads {
  constructor(private readonly reads: CallbackReadRepository) {}

  /** A page, and the open circuits its callbacks wait behind (what their next attempt shows: callbackView). */
  async list(f: CallbackFilter, scope?: CallbackScope): Promise<CallbackPage> {
    const rows = await this.reads.listCallbacks({
      partnerId: scope ? scope.partnerId : f.partnerId,
      statuses: f.status && storedStatuses(f.status),
      companyId: f.companyId,
      origin: f.destination,
      message: f.message,
      beforeSeq: f.cursor === undefined ? undefined : decodeCursor(f.cursor),
      createdFrom: f.from,
      createdTo: f.to,
      rows: f.limit + 1,
    });
    const items = rows.slice(0, f.limit);
    const open = await this.reads.openCircuitsOf(items.map((c) => c.destination));
    return { items, nextCursor: rows.length > f.limit ? encodeCursor(items[items.length - 1].seq) : null, open };
  }

  /** One callback, its attempts, and its destination's circuit if it is open. */
  async get(id: string, scope?: CallbackScope): Promise<CallbackWithAttempts> {
    const found = await this.reads.callbackWithAttempts(id, scope?.partnerId);
    if (!found) throw notFound('Callback');
    return { ...found, open: await this.reads.openCircuitsOf([found.callback.destination]) };
  }
}
