/**
 * A map of at most `limit` entries, least recently used first out: reading an entry ({@link get})
 * makes it the newest, and adding one past the limit drops the oldest, which `dropped` is given
 * (to close what it holds). What the service keeps per partner or destination is kept in one, so
 * its memory is bounded whatever their number; a miss costs what the entry was kept to save.
 */
export class Lru<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(
    readonly limit: number,
    private readonly dropped: (value: V, key: K) => void = () => undefined,
  ) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`an LRU keeps at least one entry (limit ${limit})`);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The entry, now the newest; undefined when none is kept. */
  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  /** Keeps the entry as the newest, dropping the oldest beyond the limit. */
  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    for (const [oldKey, oldValue] of this.entries) {
      if (this.entries.size <= this.limit) break;
      this.entries.delete(oldKey);
      this.dropped(oldValue, oldKey);
    }
  }

  /** Forgets the entry, without `dropped`. */
  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  /** The entries, oldest first. */
  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.entries[Symbol.iterator]();
  }
}
