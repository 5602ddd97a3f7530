// Durations as the configuration spells them (CALLBACK_RETRY_SCHEDULE, CALLBACK_RETENTION, …).
const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses `5s,5m,30m,2h` into milliseconds; throws on anything else. */
export function parseDurationList(raw: string): number[] {
  return raw.split(',').map((part) => {
    const m = /^\s*(\d+)\s*(ms|s|m|h)\s*$/.exec(part);
    if (!m) throw new Error(`"${part.trim()}" is not a duration like 500ms, 5s, 5m or 2h`);
    return Number(m[1]) * DURATION_UNITS[m[2]];
  });
}

const SINGLE_DURATION_UNITS: Record<string, number> = { ...DURATION_UNITS, d: 86_400_000 };

/** Parses one duration such as `30d`, `12h` or `1s` (days allowed here) into milliseconds. */
export function parseDuration(raw: string): number {
  const m = /^\s*(\d+)\s*(ms|s|m|h|d)\s*$/.exec(raw);
  if (!m) throw new Error(`"${raw.trim()}" is not a duration like 1s, 12h or 30d`);
  return Number(m[1]) * SINGLE_DURATION_UNITS[m[2]];
}
