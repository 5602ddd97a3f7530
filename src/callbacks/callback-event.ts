import { currentTraceparent } from '../platform/index.js';
import { CallbackIds, CallbackMessage } from './callback-message.js';

/** What a change records: one callback, to the URL registered at the moment of the change. */
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
