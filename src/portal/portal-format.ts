/**
 * What the portal's pages compute before their templates render: the chart's geometry, times as
 * people read them (UTC), and the pages' query values read strictly (a value that is not what
 * its field takes is refused by name, never guessed).
 */

export interface HourCount {
  hour: Date;
  succeeded: number;
  failed: number;
}

export interface ChartBar {
  x: number;
  w: number;
  okY: number;
  okH: number;
  badY: number;
  badH: number;
}

export interface Chart {
  width: number;
  height: number;
  base: number;
  max: number;
  bars: ChartBar[];
  succeeded: number;
  failed: number;
  firstLabel: string;
  lastLabel: string;
}

const WIDTH = 480;
const HEIGHT = 160;
/** Room under the bars for the hour labels. */
const FOOT = 14;
/** Room above the tallest bar for the scale's label. */
const HEAD = 14;

/** Stacked bars, one an hour: succeeded at the bottom, failed on top, scaled to the busiest hour. */
export function chartOf(hours: HourCount[]): Chart {
  const base = HEIGHT - FOOT;
  const max = Math.max(1, ...hours.map((h) => h.succeeded + h.failed));
  const slot = WIDTH / Math.max(1, hours.length);
  const scale = (n: number) => Math.round(((base - HEAD) * n) / max);
  const bars = hours.map((h, i) => {
    const okH = scale(h.succeeded);
    const badH = scale(h.failed);
    return { x: Math.round(i * slot + 1), w: Math.max(1, Math.round(slot - 2)), okY: base - okH, okH, badY: base - okH - badH, badH };
  });
  return {
    width: WIDTH,
    height: HEIGHT,
    base,
    max,
    bars,
    succeeded: hours.reduce((n, h) => n + h.succeeded, 0),
    failed: hours.reduce((n, h) => n + h.failed, 0),
    firstLabel: hours.length ? hourLabel(hours[0].hour) : '',
    lastLabel: hours.length ? hourLabel(hours[hours.length - 1].hour) : '',
  };
}

/** `2026-11-29 14:05:09 UTC`; a dash for none. */
export function timeLabel(t: string | Date | null | undefined): string {
  if (t === null || t === undefined) return '—';
  const d = typeof t === 'string' ? new Date(t) : t;
  return Number.isNaN(d.getTime()) ? '—' : `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** `14:00` (UTC). */
export function hourLabel(t: Date): string {
  return `${t.toISOString().slice(11, 16)}`;
}

/** A refused query or form value: the page says which field and why. */
export class FieldError extends Error {}

/**
 * A `datetime-local` value (`2026-11-29T14:05`, seconds optional) read as UTC, or an ISO-8601
 * time with its zone; empty is none.
 */
export function parseTime(field: string, text: string | undefined): Date | undefined {
  if (text === undefined || text === '') return undefined;
  const local = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/.test(text);
  const zoned = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(text);
  const d = new Date(local ? `${text}Z` : text);
  if ((!local && !zoned) || Number.isNaN(d.getTime())) throw new FieldError(`${field} must be a date and time such as 2026-11-29T14:05 (UTC)`);
  return d;
}

/** A time as a `datetime-local` field shows it (UTC, to the minute or second). */
export function timeField(d: Date): string {
  const s = d.toISOString();
  return s.endsWith(':00.000Z') ? s.slice(0, 16) : s.slice(0, 19);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A UUID (lower-case, as the API's ids are), or none when empty. */
export function parseUuid(field: string, raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  const text = raw.trim().toLowerCase();
  if (!UUID.test(text)) throw new FieldError(`${field} must be an id such as 3f1c2a9e-0b7d-4c41-9a55-2f0e8c6d7b10`);
  return text;
}

/** One of `allowed`, or none when empty. */
export function parseChoice<T extends string>(field: string, raw: string | undefined, allowed: readonly T[]): T | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!(allowed as readonly string[]).includes(raw)) throw new FieldError(`${field} must be one of ${allowed.join(', ')}`);
  return raw as T;
}

/** A query or form value given once: a repeated one (`?a=1&a=2`) is refused, not guessed. */
export function single(values: Record<string, unknown> | undefined, field: string): string | undefined {
  const v = values?.[field];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new FieldError(`${field} is given more than once`);
  return v;
}
