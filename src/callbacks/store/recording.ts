import { EntityManager } from 'typeorm';
import { InputColumns, noteDue } from '../../platform/index.js';
import type { CallbackEvent } from '../callback-event.js';
import { buildCallbackBody } from '../callback-message.js';

/** Inserts the events' callbacks, due now, inside a change's transaction (Writes), which then wakes admission. */
export async function insertCallbacks(m: EntityManager, events: CallbackEvent[]): Promise<void> {
  noteDue(m, events.length);
  const insert = callbackRows(events);
  await m.query(insert.text, insert.values);
}

/**
 * The INSERT of events' callbacks, one statement, its parameters numbered from `first` and its
 * rows written only `when` that condition holds (both for a place in a larger statement). The rows
 * go in in the order of the events (seq follows `ord`).
 */
export function callbackRows(events: CallbackEvent[], first = 1, when = 'true'): { text: string; values: unknown[] } {
  return { text: callbackInsert(first, when), values: callbackValues(events) };
}

/** The text of {@link callbackRows}' statement, for a statement prepared once that embeds it. */
export function callbackInsert(first = 1, when = 'true'): string {
  return `INSERT INTO callbacks (${CALLBACK_INPUT.names}, status, next_attempt_at)
       SELECT ${CALLBACK_INPUT.names}, 'pending', now()
         FROM unnest(${CALLBACK_INPUT.arrays(first)}) WITH ORDINALITY AS e(${CALLBACK_INPUT.names}, ord)
        WHERE ${when}
        ORDER BY ord`;
}

/** The parameters of {@link callbackRows}' statement for `events` ({@link CALLBACK_PARAMS} of them). */
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

/** How many parameters callbackRows's statement takes (a larger statement numbers its own after them). */
export const CALLBACK_PARAMS = CALLBACK_INPUT.count;
