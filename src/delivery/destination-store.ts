import { DestinationState } from './destination-window.js';

/** How `destinations` rows are read: times as epoch milliseconds (PostgreSQL's clock). */
export const DESTINATION_COLUMNS = `d.origin, d.window_size, d.failures, d.probe_ms, d.last_error,
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

/** Writes states back, one statement for many destinations. */
export const SAVE_DESTINATIONS = `
  UPDATE destinations d SET window_size = s.window_size, failures = s.failures, probe_ms = s.probe_ms, last_error = s.last_error,
         opened_at = to_timestamp(s.opened_at / 1000), next_probe_at = to_timestamp(s.next_probe_at / 1000), last_ok_at = to_timestamp(s.last_ok_at / 1000)
    FROM unnest($1::text[], $2::int[], $3::int[], $4::int[], $5::text[], $6::float8[], $7::float8[], $8::float8[])
      AS s(origin, window_size, failures, probe_ms, last_error, opened_at, next_probe_at, last_ok_at)
   WHERE d.origin = s.origin`;

export function saveParams(states: Map<string, DestinationState>): unknown[] {
  const all = [...states];
  const col = <T>(f: (s: DestinationState) => T) => all.map(([, s]) => f(s));
  return [all.map(([o]) => o), col((s) => s.window), col((s) => s.failures), col((s) => s.probeMs), col((s) => s.lastError), col((s) => s.openedAt), col((s) => s.nextProbeAt), col((s) => s.lastOkAt)];
}
