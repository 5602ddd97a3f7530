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
export const saveDestinations = (first: number): string => {
  const p = (i: number) => `$${first + i}`;
  return `UPDATE destinations d SET window_size = s.window_size, failures = s.failures, probe_ms = s.probe_ms, last_error = s.last_error,
         opened_at = to_timestamp(s.opened_at / 1000), next_probe_at = to_timestamp(s.next_probe_at / 1000), last_ok_at = to_timestamp(s.last_ok_at / 1000),
         version = d.version + 1
    FROM unnest(${p(0)}::text[], ${p(1)}::int[], ${p(2)}::int[], ${p(3)}::int[], ${p(4)}::text[], ${p(5)}::float8[], ${p(6)}::float8[], ${p(7)}::float8[], ${p(8)}::bigint[])
      AS s(origin, window_size, failures, probe_ms, last_error, opened_at, next_probe_at, last_ok_at, version)
   WHERE d.origin = s.origin AND d.version = s.version
  RETURNING d.origin`;
};

/** A destination's new state, to be written over the version it was read at. */
export interface DestinationWrite {
  state: DestinationState;
  version: string;
}

export function saveParams(writes: Map<string, DestinationWrite>): unknown[] {
  const all = [...writes];
  const col = <T>(f: (s: DestinationState) => T) => all.map(([, w]) => f(w.state));
  return [all.map(([o]) => o), col((s) => s.window), col((s) => s.failures), col((s) => s.probeMs), col((s) => s.lastError), col((s) => s.openedAt), col((s) => s.nextProbeAt), col((s) => s.lastOkAt), all.map(([, w]) => w.version)];
}
