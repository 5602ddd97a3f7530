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
