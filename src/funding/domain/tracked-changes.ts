/** A row's tracked properties, read at one moment. */
export type Snapshot = Record<string, unknown>;

/** What one change did to one row: the tracked properties that changed, before and after. */
export interface RowChanges {
  /** The table of the row (`limit_requests`, `companies`, …). */
  table: string;
  id: string;
  before: Snapshot;
  after: Snapshot;
}

export function snapshot<T extends object>(row: T, properties: readonly (keyof T & string)[]): Snapshot {
  return Object.fromEntries(properties.map((p) => [p, row[p]]));
}

/**
 * The tracked properties whose value differs between two snapshots of one row, or null when none
 * did. Values are compared as they are held (bigint amounts by value, strings as written).
 */
export function changesOf(table: string, id: string, before: Snapshot, after: Snapshot): RowChanges | null {
  const changed = Object.keys(before).filter((p) => !Object.is(before[p], after[p]));
  if (changed.length === 0) return null;
  return {
    table,
    id,
    before: Object.fromEntries(changed.map((p) => [p, before[p]])),
    after: Object.fromEntries(changed.map((p) => [p, after[p]])),
  };
}
