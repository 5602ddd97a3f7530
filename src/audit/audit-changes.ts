import { formatMoney } from '../common/money.js';

/** A JSON value of a tracked property, as the API shows it (money as its decimal string). */
export type Tracked = string | number | boolean | null;

/**
 * The tracked properties that differ between two snapshots, each side holding only those:
 * `{creditLimit: "0.00", creditStatus: "pending"}` → `{creditLimit: "5000.00", …}`. Only what
 * the caller passes is compared, so a secret is never in an entry unless a caller puts it there
 * (none does: a rotation records `{rotated: true}`-style facts, never a value).
 */
export function changedProperties(
  before: Record<string, Tracked>,
  after: Record<string, Tracked>,
): { before: Record<string, Tracked>; after: Record<string, Tracked> } {
  const out = { before: {} as Record<string, Tracked>, after: {} as Record<string, Tracked> };
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (before[key] === after[key]) continue;
    if (key in before) out.before[key] = before[key];
    if (key in after) out.after[key] = after[key];
  }
  return out;
}

/**
 * A tracked property's value as an entry holds it: money (held as bigint cents) as its decimal
 * string, a time as ISO-8601, anything else as it is.
 */
export function trackedValue(value: unknown): Tracked {
  if (typeof value === 'bigint') return formatMoney(value);
  if (value instanceof Date) return value.toISOString();
  if (value === undefined) return null;
  return value as Tracked;
}

/** Every property of a snapshot as {@link trackedValue}. */
export function trackedValues(snapshot: Record<string, unknown>): Record<string, Tracked> {
  return Object.fromEntries(Object.entries(snapshot).map(([k, v]) => [k, trackedValue(v)]));
}
