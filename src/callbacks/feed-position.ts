import { invalidProperty } from '../platform/index.js';

/**
 * A callback's place in the feed: the top-level transaction that recorded it (`xact`, PostgreSQL's
 * 64-bit transaction id) and its insertion number within the table (`seq`), ordered by both.
 *
 * The rule that makes a reader passing `next` see every callback exactly once: a callback is
 * exposed only once its transaction id is below the reading statement's horizon (no transaction
 * of this database with a smaller id can still commit; store/feed-page.ts reads it from the
 * snapshot). Any callback not visible yet belongs to a transaction still running or not yet
 * started, whose id is at or above the horizon: it can only appear after every position already
 * returned. `seq` alone would not do: a transaction that took its
 * id first may insert later, or insert first and commit last.
 */
export interface FeedPosition {
  xact: bigint;
  seq: bigint;
}

/** seq is a bigint: below 10^19, so the position's last 19 digits are seq, the digits before them xact. */
const SEQ_DIGITS = 19;
const SEQ_SCALE = 10n ** BigInt(SEQ_DIGITS);
const MAX_XACT = 2n ** 64n - 1n;
const MAX_SEQ = 2n ** 63n - 1n;

export const FEED_START: FeedPosition = { xact: 0n, seq: 0n };

/** The opaque string of digits partners see. */
export function encodePosition(p: FeedPosition): string {
  return (p.xact * SEQ_SCALE + p.seq).toString();
}

/** A position as `after` gives it: plain digits, one the feed could have returned; else 400 naming `after`. */
export function decodePosition(text: string): FeedPosition {
  if (!/^(0|[1-9]\d{0,39})$/.test(text))
    throw invalidProperty('after must be a position returned by the feed: a string of digits');
  const n = BigInt(text);
  const p = { xact: n / SEQ_SCALE, seq: n % SEQ_SCALE };
  if (p.xact > MAX_XACT || p.seq > MAX_SEQ) throw invalidProperty('after is not a position the feed returns');
  return p;
}

export const comparePositions = (a: FeedPosition, b: FeedPosition): number =>
  a.xact !== b.xact ? (a.xact < b.xact ? -1 : 1) : a.seq === b.seq ? 0 : a.seq < b.seq ? -1 : 1;

/**
 * The rule on rows already visible (committed), as the feed's statement applies it: those after
 * `after` whose transaction is below `horizon`, in position order, `limit`
 * of them. The property test (feed-position.spec.ts) runs it against interleaved transactions.
 */
export function feedPage<T extends FeedPosition>(
  visible: T[],
  horizon: bigint,
  after: FeedPosition,
  limit: number,
): T[] {
  return visible
    .filter((r) => r.xact < horizon && comparePositions(r, after) > 0)
    .sort(comparePositions)
    .slice(0, limit);
}
