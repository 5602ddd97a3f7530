import { performance } from 'node:perf_hooks';

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
 * they found (a stranger's guesses would only fill it); past `limit` entries it starts afresh.
 */
export class CredentialCache<V> {
  private readonly entries = new Map<string, { value: V; at: number }>();
  private generation = 0;

  constructor(
    private readonly trustMs: number,
    private readonly limit: number,
    private readonly clock: MonotonicClock = () => performance.now(),
  ) {}

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
    if (this.entries.size >= this.limit) this.entries.clear();
    this.entries.set(hash, { value, at: lookup.at });
  }

  /** Trusts this credential no longer, nor what any lookup under way finds. */
  forget(hash: string): void {
    this.generation++;
    this.entries.delete(hash);
  }
}
