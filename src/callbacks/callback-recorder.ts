import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { InputColumns } from '../database/sql.js';
import { AdmissionSignal } from '../delivery/admission-signal.js';
import { currentTraceparent } from '../telemetry/trace-context.js';
import { buildCallbackBody, CallbackIds, CallbackMessage } from './callback-message.js';

export interface CallbackEvent {
  message: CallbackMessage;
  /** The URL registered on the resource at the moment of the change; null = none registered. */
  url: string | null;
  partnerId: string;
  ids: CallbackIds;
  /**
   * The trace of the change (a traceparent), taken where the change is made (traced()): its
   * callbacks' attempts become spans of that trace. Unset when tracing is off.
   */
  trace?: string | null;
}

/** The events with the trace of the request under way (tracing off: as they are). */
export function traced(events: CallbackEvent[]): CallbackEvent[] {
  const trace = currentTraceparent();
  return trace === null ? events : events.map((e) => ({ ...e, trace }));
}

/** A transaction begun by `transaction`, and how many callbacks it recorded so far. */
interface Recording {
  callbacks: number;
}

/**
 * The domain's only door into callbacks, and the one after-commit hook of every path that writes
 * callback rows: a domain transaction records its callbacks inside itself (`transaction`,
 * `record`), so a change and its callbacks commit together or not at all, and admission is woken
 * once it committed; a write that commits on its own (a one-row change, a redelivery, a probe)
 * calls `committed` once it has.
 */
@Injectable()
export class CallbackRecorder {
  private readonly open = new WeakMap<EntityManager, Recording>();

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly signal: AdmissionSignal,
  ) {}

  /** A domain transaction: `work` records its callbacks with `record(m, …)`; admission wakes after the commit. */
  async transaction<T>(work: (m: EntityManager) => Promise<T>): Promise<T> {
    const recording: Recording = { callbacks: 0 };
    const result = await this.db.transaction(async (m) => {
      this.open.set(m, recording);
      try {
        return await work(m);
      } finally {
        this.open.delete(m);
      }
    });
    this.committed(recording.callbacks);
    return result;
  }

  /** Records the callbacks of one change; returns how many were written (events without a URL are skipped). */
  async record(m: EntityManager, events: CallbackEvent[]): Promise<number> {
    const due = events.filter((e) => e.url !== null);
    if (due.length === 0) return 0;
    const recording = this.open.get(m);
    if (!recording || !m.queryRunner?.isTransactionActive) throw new Error('callbacks are recorded inside CallbackRecorder.transaction, with their change');
    const insert = callbackRows(traced(due));
    await m.query(insert.text, insert.values);
    recording.callbacks += due.length;
    return due.length;
  }

  /** After a commit that wrote (or made due) `callbacks` callback rows: admission looks at once. */
  committed(callbacks: number): void {
    if (callbacks > 0) this.signal.wake();
  }
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
