/**
 * What waits behind an open circuit, and until when: the one rule of when an open destination's
 * next probe goes, which admission follows (delivery/destination-window.ts, roomOf) and every view
 * shows (the API's and the portal's Destination and callbacks, the queue dashboard's jobs).
 * Times are epoch milliseconds on PostgreSQL's clock, as the store reads them.
 */

/**
 * A destination's circuit as stored: open since (null: closed), its next automatic probe, whether
 * one was asked for.
 */
export interface Circuit {
  openedAt: number | null;
  nextProbeAt: number | null;
  /** A manual redelivery asked for one of its callbacks to go as the next probe (destinations.probe_id). */
  probeAsked: boolean;
}

/**
 * Whether an open circuit's next callback goes as its probe as soon as nothing is in flight there:
 * its probe is due, or a person asked for one (a manual redelivery brings the probe forward). Such a
 * circuit is half-open, whether or not a callback waits: the next one, fresh or redelivered, is the probe.
 */
export function probeReady(c: Circuit, now: number): boolean {
  return c.openedAt !== null && (c.probeAsked || (c.nextProbeAt !== null && c.nextProbeAt <= now));
}

/**
 * When an open circuit's next probe goes, as shown: now once it is ready (never a time already
 * past), else its time.
 */
export function nextProbeShown(c: Circuit, now: number): number | null {
  if (c.openedAt === null) return null;
  return probeReady(c, now) || c.nextProbeAt === null ? now : c.nextProbeAt;
}

/** The open circuits of some destinations (by key), as one read found them, and that read's clock. */
export interface OpenCircuits {
  now: number;
  byKey: ReadonlyMap<string, Circuit>;
}

/** No open circuit: callbacks show their own next attempt. */
export const NO_OPEN_CIRCUITS: OpenCircuits = { now: 0, byKey: new Map() };

/** A callback as the next attempt it shows depends on it. */
export interface WaitingCallback {
  status: string;
  /** Its own next attempt (ms), null when settled. */
  nextAttemptAt: number | null;
}

/**
 * The next attempt a callback shows (the API's `nextAttemptAt`, the portal's, the dashboard's):
 * none once settled; its own time while its destination is closed or while it is being attempted;
 * held by an open circuit, the destination's next probe, since nothing goes there before it (now
 * once the probe is ready: this callback or the next is it). `now` is the circuit's read's clock.
 */
export function nextAttemptShown(c: WaitingCallback, circuit: Circuit | null, now: number): number | null {
  if (c.status !== 'pending' && c.status !== 'sending') return null;
  if (c.status === 'sending' || circuit === null || circuit.openedAt === null) return c.nextAttemptAt;
  return nextProbeShown(circuit, now);
}
