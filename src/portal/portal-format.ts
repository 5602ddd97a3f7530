/**
 * What the portal's pages compute before their templates render: the chart's geometry, times as
 * people read them (UTC, to the second, one format everywhere), ids and URLs that may break at
 * their separators only, and the pages' query values read strictly (a value that is not what its
 * field takes is refused by name, never guessed).
 */
import { callbackOrigin } from '../callbacks/index.js';

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
/** Room under the bars for the axis' labels. */
const FOOT = 14;
/** Room above the tallest bar for the scale's label. */
const HEAD = 14;

/** Stacked bars, one an hour, oldest left: succeeded at the bottom, failed on top, scaled to the busiest hour. */
export function chartOf(hours: HourCount[]): Chart {
  const base = HEIGHT - FOOT;
  const max = Math.max(1, ...hours.map((h) => h.succeeded + h.failed));
  const slot = WIDTH / Math.max(1, hours.length);
  const scale = (n: number) => Math.round(((base - HEAD) * n) / max);
  const bars = hours.map((h, i) => {
    const okH = scale(h.succeeded);
    const badH = scale(h.failed);
    const x = Math.round(i * slot + 1);
    return { x, w: Math.max(1, Math.round(slot - 2)), okY: base - okH, okH, badY: base - okH - badH, badH };
  });
  return {
    width: WIDTH,
    height: HEIGHT,
    base,
    max,
    bars,
    succeeded: hours.reduce((n, h) => n + h.succeeded, 0),
    failed: hours.reduce((n, h) => n + h.failed, 0),
    firstLabel: hours.length ? timeLabel(hours[0].hour) : '',
    lastLabel: hours.length ? timeLabel(hours[hours.length - 1].hour) : '',
  };
}

/** The one time format of the portal: `2026-11-29 14:05:09 UTC`; a dash for none. */
export function timeLabel(t: string | Date | number | null | undefined): string {
  if (t === null || t === undefined) return '—';
  const d = t instanceof Date ? t : new Date(t);
  return Number.isNaN(d.getTime()) ? '—' : `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** An ISO-8601 UTC time inside a text (an error naming when a circuit opened). */
const ISO_IN_TEXT = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z\b/g;

/** A stored text (an error, a refusal's message) with every ISO time in it in the portal's format. */
export function textWithTimes(text: string | null | undefined): string {
  return (text ?? '').replace(ISO_IN_TEXT, (iso) => timeLabel(iso));
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** After these a long id or URL may break (and nowhere else). */
const AFTER_SEPARATOR = /(?<=[/.\-?&=_:#@,])/;

/** Whether a break between two pieces would fall inside a URL's `://`. */
const inSchemeSeparator = (before: string, after: string) => /:\/?$/.test(before) && after.startsWith('/');

/** Escaped HTML of an id or URL, with a break opportunity after each of its separators (`<wbr>`) but inside `://`. */
export function breakable(text: string | null | undefined): string {
  const pieces = (text ?? '').split(AFTER_SEPARATOR).reduce<string[]>((out, piece) => {
    if (out.length > 0 && inSchemeSeparator(out[out.length - 1], piece)) out[out.length - 1] += piece;
    else out.push(piece);
    return out;
  }, []);
  return pieces.map((part) => part.replace(/[&<>"']/g, (c) => ESCAPES[c])).join('<wbr>');
}

/** A refused query or form value: the page says which field and why. */
export class FieldError extends Error {}

/**
 * A `datetime-local` value (`2026-11-29T14:05:09`, seconds optional) read as UTC, or an ISO-8601
 * time with its zone; empty is none.
 */
export function parseTime(field: string, text: string | undefined): Date | undefined {
  if (text === undefined || text === '') return undefined;
  const local = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/.test(text);
  const zoned = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(text);
  const d = new Date(local ? `${text}Z` : text);
  if ((!local && !zoned) || Number.isNaN(d.getTime())) {
    throw new FieldError(`${field} must be a date and time such as 2026-11-29T14:05:09 (UTC)`);
  }
  return d;
}

/** A time as a `datetime-local` field with seconds (`step="1"`) shows it, in UTC. */
export function timeField(d: Date): string {
  return d.toISOString().slice(0, 19);
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
export function parseChoice<T extends string>(
  field: string,
  raw: string | undefined,
  allowed: readonly T[],
): T | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new FieldError(`${field} must be one of ${allowed.join(', ')}`);
  }
  return raw as T;
}

/** A query or form value given once: a repeated one (`?a=1&a=2`) is refused, not guessed. */
export function single(values: Record<string, unknown> | undefined, field: string): string | undefined {
  const v = values?.[field];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new FieldError(`${field} is given more than once`);
  return v;
}

/** The message filter and the test's message: a code 0–4, or none. */
export function parseMessage(field: string, raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^[0-4]$/.test(raw)) throw new FieldError(`${field} must be a message code from 0 to 4`);
  return Number(raw);
}

/** The query of a page's URL from the defined values, in their order. */
export function queryOf(values: Record<string, string | undefined>): string {
  const defined = Object.entries(values).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== '');
  return new URLSearchParams(defined).toString();
}

const ORIGIN = /^https?:\/\/[^\s/?#@\\]+$/i;

/** A callback URL's origin (scheme, host, port), normalised as destinations are keyed; none when empty. */
export function parseOrigin(field: string, raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (raw.length > 2048 || !ORIGIN.test(raw)) {
    throw new FieldError(
      `${field} must be an origin: scheme, host and port, without a path, e.g. https://hooks.example.com`,
    );
  }
  return callbackOrigin(raw);
}
