import { formatMoney } from '../../platform/index.js';

/** A JSON value of a tracked property, as the API shows it (money as its decimal string). */
export type Tracked = string | number | boolean | null;

/**
 * An entry's before or after: the target's own properties, and those of other rows it changed by
 * their name (`company`).
 */
export type TrackedProperties = Record<string, Tracked | Record<string, Tracked>>;

/**
 * The tracked properties that differ between two snapshots, each side holding only those:
 * `{creditLimit: "0.00", creditStatus: "pending"}` → `{creditLimit: "5000.00", …}`. Only what
 * the caller passes is compared, so a secret is never in an entry unless a caller puts it there
 * (none does: a rotation records `{rotated: true}`-style facts, never a value).
 */
export function changedProperties(
  before: TrackedProperties,
  after: TrackedProperties,
): { before: TrackedProperties; after: TrackedProperties } {
  const out = { before: {} as TrackedProperties, after: {} as TrackedProperties };
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (JSON.stringify(before[key]) === JSON.stringify(after[key])) continue;
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

/** Tables as an entry names the other rows a change touched. */
const ROW_NAMES: Record<string, string> = {
  companies: 'company',
  limit_requests: 'limitRequest',
  withdrawal_requests: 'withdrawalRequest',
  loans: 'loan',
};

/**
 * An entry's before and after from the rows a change wrote (each with only its changed tracked
 * properties): the target row's at the top, every other row's under its name.
 */
export function rowChangesAudit(
  targetId: string,
  rows: { table: string; id: string; before: Record<string, unknown>; after: Record<string, unknown> }[],
): { before: TrackedProperties; after: TrackedProperties } {
  const out = { before: {} as TrackedProperties, after: {} as TrackedProperties };
  for (const row of rows) {
    const before = trackedValues(row.before);
    const after = trackedValues(row.after);
    if (row.id === targetId) {
      Object.assign(out.before, before);
      Object.assign(out.after, after);
    } else {
      const name = ROW_NAMES[row.table] ?? row.table;
      out.before[name] = before;
      out.after[name] = after;
    }
  }
  return out;
}
