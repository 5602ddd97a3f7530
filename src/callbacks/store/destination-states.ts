import { InputColumns } from '../../platform/index.js';

/** How `destinations` rows are read: times as epoch milliseconds (PostgreSQL's clock). */
export const DESTINATION_COLUMNS = `d.key, d.partner_id, d.origin, d.window_size, d.failures, d.probe_ms, d.last_error,
  d.version::text AS version,
  d.probe_id,
  (extract(epoch FROM d.opened_at) * 1000)::float8 AS opened_at,
  (extract(epoch FROM d.next_probe_at) * 1000)::float8 AS next_probe_at,
  (extract(epoch FROM d.last_ok_at) * 1000)::float8 AS last_ok_at`;

/** A destination's window and breaker as stored (times in epoch ms). */
export interface DestinationColumns {
  window_size: number;
  failures: number;
  probe_ms: number;
  last_error: string | null;
  opened_at: number | null;
  next_probe_at: number | null;
  last_ok_at: number | null;
}

export interface DestinationRow extends DestinationColumns {
  /** The partner's id and the origin (callback-destination.ts, destinationKey): what callbacks.destination holds. */
  key: string;
  partner_id: string;
  /** What is shown of it. */
  origin: string;
  /** Bumped by every write: a settlement writes only over the version it read. */
  version: string;
  /**
   * The callback a person asked to go as its next probe (a manual redelivery while it is open),
   * until admission admits a probe or the circuit closes; never written by settlement's fold.
   */
  probe_id: string | null;
}

/**
 * A destination's new state, to be written over the version it was read at; `reported`: the
 * opening or closing of its circuit the write makes, which its operational event reports (only if
 * this write is the one that lands), with `failingSince` (when it had opened) for a closing.
 */
export interface DestinationSave {
  key: string;
  columns: DestinationColumns;
  version: string;
  reported: 'opened' | 'closed' | null;
  failingSince: number | null;
}

/** Destinations as settlement reads them, with PostgreSQL's clock. */
export const READ_DESTINATIONS = `
  SELECT ${DESTINATION_COLUMNS}, (extract(epoch FROM now()) * 1000)::float8 AS now
    FROM destinations d WHERE d.key = ANY($1::text[])`;

/**
 * Writes states back, one statement for many destinations (its parameters numbered from
 * `first`), each only over the version it was read at. Yields the destinations written (and what the
 * operational events of an opening or closing need): another process's settlement in between
 * leaves one out, to be folded again. A closed circuit has no probe to ask for: a request a
 * redelivery made (probe_id, which no version covers) ends with it, as the row stands when written.
 */
export const saveDestinations = (first: number): string =>
  `UPDATE destinations d SET window_size = s.window_size, failures = s.failures, probe_ms = s.probe_ms,
         last_error = s.last_error,
         opened_at = to_timestamp(s.opened_at / 1000), next_probe_at = to_timestamp(s.next_probe_at / 1000),
         last_ok_at = to_timestamp(s.last_ok_at / 1000),
         probe_id = CASE WHEN s.opened_at IS NULL THEN NULL ELSE d.probe_id END, version = d.version + 1
    FROM ${SAVE_INPUT.unnest('s', first)}
   WHERE d.key = s.key AND d.version = s.version
  RETURNING d.key, d.partner_id, d.origin, s.reported, s.failing_since, d.opened_at, d.last_error`;

/** saveDestinations' input: one row per destination written. */
const SAVE_INPUT = new InputColumns<DestinationSave>([
  { name: 'key', type: 'text', value: (w) => w.key },
  { name: 'window_size', type: 'int', value: (w) => w.columns.window_size },
  { name: 'failures', type: 'int', value: (w) => w.columns.failures },
  { name: 'probe_ms', type: 'int', value: (w) => w.columns.probe_ms },
  { name: 'last_error', type: 'text', value: (w) => w.columns.last_error },
  { name: 'opened_at', type: 'float8', value: (w) => w.columns.opened_at },
  { name: 'next_probe_at', type: 'float8', value: (w) => w.columns.next_probe_at },
  { name: 'last_ok_at', type: 'float8', value: (w) => w.columns.last_ok_at },
  { name: 'version', type: 'bigint', value: (w) => w.version },
  { name: 'reported', type: 'text', value: (w) => w.reported },
  { name: 'failing_since', type: 'float8', value: (w) => w.failingSince },
]);

/** How many parameters saveDestinations takes. */
export const SAVE_PARAMS = SAVE_INPUT.count;

export const saveParams = (saves: DestinationSave[]): unknown[] => SAVE_INPUT.params(saves);
