import { InputColumns } from '../database/sql.js';
import { DestinationState } from './destination-window.js';

/** How `destinations` rows are read: times as epoch milliseconds (PostgreSQL's clock). */
export const DESTINATION_COLUMNS = `d.origin, d.window_size, d.failures, d.probe_ms, d.last_error, d.version::text AS version,
  (extract(epoch FROM d.opened_at) * 1000)::float8 AS opened_at,
  (extract(epoch FROM d.next_probe_at) * 1000)::float8 AS next_probe_at,
  (extract(epoch FROM d.last_ok_at) * 1000)::float8 AS last_ok_at`;

export interface DestinationRow {
  origin: string;
  window_size: number;
  failures: number;
  probe_ms: number;
  last_error: string | null;
  opened_at: number | null;
  next_probe_at: number | null;
  last_ok_at: number | null;
  /** Bumped by every write: a settlement writes only over the version it read. */
  version: string;
}

export const stateOf = (r: DestinationRow): DestinationState => ({
  window: r.window_size,
  failures: r.failures,
  openedAt: r.opened_at,
  nextProbeAt: r.next_probe_at,
  probeMs: r.probe_ms,
  lastError: r.last_error,
  lastOkAt: r.last_ok_at,
});

/**
 * Writes states back, one statement for many destinations (its parameters numbered from
 * `first`), each only over the version it was read at. Yields the origins written: another
 * process's settlement in between leaves one out, to be folded again.
 */
export const saveDestinations = (first: number): string =>
  `UPDATE destinations d SET window_size = s.window_size, failures = s.failures, probe_ms = s.probe_ms, last_error = s.last_error,
         opened_at = to_timestamp(s.opened_at / 1000), next_probe_at = to_timestamp(s.next_probe_at / 1000), last_ok_at = to_timestamp(s.last_ok_at / 1000),
         version = d.version + 1
    FROM ${SAVE_INPUT.unnest('s', first)}
   WHERE d.origin = s.origin AND d.version = s.version
  RETURNING d.origin, s.reported, s.failing_since, d.opened_at, d.last_error`;

/**
 * A destination's new state, to be written over the version it was read at; `reported`: the
 * opening or closing of its circuit the write makes, which its operational event reports (only if
 * this write is the one that lands), with `failingSince` (when it had opened) for a closing.
 */
export type DestinationWrite = { state: DestinationState; version: string; reported?: 'opened' | 'closed' | null; failingSince?: number | null };

/** saveDestinations' input: one row per destination written (times in epoch ms, as DestinationState keeps them). */
const SAVE_INPUT = new InputColumns<[string, DestinationWrite]>([
  { name: 'origin', type: 'text', value: ([origin]) => origin },
  { name: 'window_size', type: 'int', value: ([, w]) => w.state.window },
  { name: 'failures', type: 'int', value: ([, w]) => w.state.failures },
  { name: 'probe_ms', type: 'int', value: ([, w]) => w.state.probeMs },
  { name: 'last_error', type: 'text', value: ([, w]) => w.state.lastError },
  { name: 'opened_at', type: 'float8', value: ([, w]) => w.state.openedAt },
  { name: 'next_probe_at', type: 'float8', value: ([, w]) => w.state.nextProbeAt },
  { name: 'last_ok_at', type: 'float8', value: ([, w]) => w.state.lastOkAt },
  { name: 'version', type: 'bigint', value: ([, w]) => w.version },
  { name: 'reported', type: 'text', value: ([, w]) => w.reported ?? null },
  { name: 'failing_since', type: 'float8', value: ([, w]) => w.failingSince ?? null },
]);

export const saveParams = (writes: Map<string, DestinationWrite>): unknown[] => SAVE_INPUT.params([...writes]);
