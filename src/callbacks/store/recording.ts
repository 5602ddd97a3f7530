import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { InputColumns, noteDue } from '../../platform/index.js';
import type { CallbackEvent } from '../callback-event.js';
import { buildCallbackBody } from '../callback-message.js';
import { RECORD } from './lifecycle.js';

/** The INSERT of events' callbacks, one statement; the rows go in in the order of the events (seq follows `ord`). */
function callbackRows(events: CallbackEvent[]): { text: string; values: unknown[] } {
  return { text: INSERT_CALLBACKS, values: callbackValues(events) };
}

/** The INSERT's text, its parameters numbered from `first` and its rows written only `when` that condition holds. */
function callbackInsert(first: number, when: string): string {
  return `INSERT INTO callbacks (${CALLBACK_INPUT.names}, ${RECORD.columns})
       SELECT ${CALLBACK_INPUT.names}, ${RECORD.values}
         FROM unnest(${CALLBACK_INPUT.arrays(first)}) WITH ORDINALITY AS e(${CALLBACK_INPUT.names}, ord)
        WHERE ${when}
        ORDER BY ord`;
}

/**
 * Another table's statement that records its rows' callbacks in the same statement (a domain row
 * write: domain/one-row-batches.ts), so that a row and its callbacks are written together or not
 * at all. The caller's text goes around the store's INSERT: `before` ends where the INSERT goes (in
 * a CTE of its own), `after` closes it. A callback is inserted only with its row: `owners` is the
 * uuid[] parameter naming each callback's row, `written` the relation of the rows written.
 */
export interface CallbacksInStatement {
  before: string;
  after: string;
  /** The callbacks' first parameter ({@link CALLBACK_PARAMS} of them, {@link callbackValues}). */
  first: number;
  owners: string;
  written: string;
}

/** The text of a statement that records callbacks with another table's rows (CallbacksInStatement). */
export function withCallbackRows(s: CallbacksInStatement): string {
  return `${s.before}${callbackInsert(s.first, `(${s.owners}::uuid[])[e.ord::int] IN (${s.written})`)}${s.after}`;
}

/** The parameters of the INSERT for `events` ({@link CALLBACK_PARAMS} of them). */
export function callbackValues(events: CallbackEvent[]): unknown[] {
  return CALLBACK_INPUT.params(events);
}

/** The columns of a new callback row an event gives (the rest are the table's defaults). */
const CALLBACK_INPUT = new InputColumns<CallbackEvent>([
  { name: 'partner_id', type: 'uuid', value: (e) => e.partnerId },
  { name: 'company_id', type: 'uuid', value: (e) => e.ids.companyId },
  { name: 'message', type: 'smallint', value: (e) => e.message },
  { name: 'url', type: 'text', value: (e) => e.url },
  { name: 'body', type: 'text', value: (e) => buildCallbackBody(e.message, e.ids) },
  { name: 'trace_parent', type: 'text', value: (e) => e.trace ?? null },
]);

/** How many parameters the INSERT takes (a larger statement numbers its own after them). */
export const CALLBACK_PARAMS = CALLBACK_INPUT.count;

export const INSERT_CALLBACKS = callbackInsert(1, 'true');

/** Callbacks recorded in the writing transaction. */
@Injectable()
export class CallbackInserts {
  /**
   * Inserts the events' callbacks, due now, inside a change's transaction (TransactionRunner), which then
   * wakes admission.
   */
  async insertCallbacks(m: EntityManager, events: CallbackEvent[]): Promise<void> {
    noteDue(m, events.length);
    const insert = callbackRows(events);
    await m.query(insert.text, insert.values);
  }
}
