import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { InputColumns, noteDue, type StatementPart } from '../../platform/index.js';
import type { CallbackEvent } from '../callback-event.js';
import { buildCallbackBody } from '../callback-message.js';
import { RECORD } from './lifecycle.js';

/** The INSERT of events' callbacks, one statement; the rows go in in the order of the events (seq follows `ord`). */
function callbackRows(events: CallbackEvent[]): { text: string; values: unknown[] } {
  return { text: INSERT_CALLBACKS, values: CALLBACK_INPUT.params(events) };
}

/** The INSERT's text, its parameters numbered from `first` and its rows written only `when` that condition holds. */
function callbackInsert(first: number, when: string): string {
  return `INSERT INTO callbacks (${CALLBACK_INPUT.names}, ${RECORD.columns})
       SELECT ${CALLBACK_INPUT.names}, ${RECORD.values}
         FROM unnest(${CALLBACK_INPUT.arrays(first)}) WITH ORDINALITY AS e(${CALLBACK_INPUT.names}, ord)
        WHERE ${when}
        ORDER BY ord`;
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

  /**
   * The INSERT of events' callbacks as a part of another table's statement that writes their rows
   * (funding's one-row writes: OneRowRepository), so that a row and its callbacks are written
   * together or not at all. Its parameters are numbered from `first`. A callback is inserted only
   * with its row: `owners` is the statement's uuid[] parameter naming each callback's row, `written`
   * the relation of the rows it wrote.
   */
  insertWithRows(first: number, owners: string, written: string): StatementPart<CallbackEvent[]> {
    return {
      text: callbackInsert(first, `(${owners}::uuid[])[e.ord::int] IN (${written})`),
      next: first + CALLBACK_INPUT.count,
      values: (events) => CALLBACK_INPUT.params(events),
    };
  }
}
