import { performance } from 'node:perf_hooks';
import { Lru } from '../../platform/index.js';

/** A monotonic clock in milliseconds: never stepped back or forward with the wall clock. */
export type MonotonicClock = () => number;

/** The clock the credential caches use (a test gives its own); performance.now() when none is given. */
export const CREDENTIAL_CLOCK = Symbol('CREDENTIAL_CLOCK');

/** When a lookup started, and in which generation: what it may keep. */
export interface Lookup {
  readonly at: number;
  readonly generation: number;
}

/**
 * What a process trusts of a credential it looked up, for a short time, by the credential's hash
 * (never the credential). The time counts from before the lookup, on a monotonic clock, so a wall
 * clock stepped back extends nothing; a lookup under way when the credential is revoked or
 * replaced here ({@link CredentialCache.forget}) does not put it back: each forget starts a new
 * generation, and a lookup keeps its answer only if none began meanwhile. Callers keep only what
 * they found (a stranger's guesses would only fill it); past `limit` entries the least recently
 * used goes, and what is no longer trusted goes as new entries come.
 */
export class CredentialCache<V> {
  private readonly entries: Lru<string, { value: V; at: number }>;
  private generation = 0;

  constructor(
    private readonly trustMs: number,
    limit: number,
    private readonly clock: MonotonicClock = () => performance.now(),
  ) {
    this.entries = new Lru(limit);
  }

  /** Entries kept, trusted or not yet dropped. */
  get size(): number {
    return this.entries.size;
  }

  /** A lookup starting now. */
  begin(): Lookup {
    return { at: this.clock(), generation: this.generation };
  }

  /** What is still trusted for this hash at the lookup's start; undefined when nothing is. */
  trusted(hash: string, lookup: Lookup): V | undefined {
    const entry = this.entries.get(hash);
    if (entry && lookup.at - entry.at < this.trustMs) return entry.value;
    this.entries.delete(hash);
    return undefined;
  }

  /** Keeps what the lookup found, unless something was forgotten since it began. */
  keep(lookup: Lookup, hash: string, value: V): void {
    if (lookup.generation !== this.generation) return;
    this.entries.set(hash, { value, at: lookup.at });
    this.forgetExpired(lookup.at);
  }

  /** Drops the least recently used entries while they are no longer trusted at `now`. */
  private forgetExpired(now: number): void {
    for (const [hash, entry] of this.entries) {
      if (now - entry.at < this.trustMs) return;
      this.entries.delete(hash);
    }
  }

  /** Trusts this credential no longer, nor what any lookup under way finds. */
  forget(hash: string): void {
    this.generation++;
    this.entries.delete(hash);
  }
}
