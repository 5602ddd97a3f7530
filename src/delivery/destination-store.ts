import type { DestinationColumns, DestinationRow, DestinationSave } from '../callbacks/index.js';
import { DestinationState } from './destination-window.js';

/**
 * A destination's state as stored (callbacks/store/destination-states.ts) and as the pure window
 * and breaker keep it.
 */
export const stateOf = (r: DestinationColumns & Pick<DestinationRow, 'probe_id'>): DestinationState => ({
  window: r.window_size,
  failures: r.failures,
  openedAt: r.opened_at,
  nextProbeAt: r.next_probe_at,
  probeMs: r.probe_ms,
  lastError: r.last_error,
  lastOkAt: r.last_ok_at,
  probeAsked: r.probe_id !== null,
});

/** The columns settlement writes: probe_id is not among them (a closing clears it: saveDestinations). */
const columnsOf = (s: DestinationState): DestinationColumns => ({
  window_size: s.window,
  failures: s.failures,
  probe_ms: s.probeMs,
  last_error: s.lastError,
  opened_at: s.openedAt,
  next_probe_at: s.nextProbeAt,
  last_ok_at: s.lastOkAt,
});

/** A destination's new state, to be written over the version it was read at, and the opening or closing it reports. */
export type DestinationWrite = {
  state: DestinationState;
  version: string;
  reported?: 'opened' | 'closed' | null;
  failingSince?: number | null;
};

/** The writes (by destination key) as the store's save takes them. */
export const savesOf = (writes: Map<string, DestinationWrite>): DestinationSave[] =>
  [...writes].map(([key, w]) => ({
    key,
    columns: columnsOf(w.state),
    version: w.version,
    reported: w.reported ?? null,
    failingSince: w.failingSince ?? null,
  }));

export type { DestinationRow };
