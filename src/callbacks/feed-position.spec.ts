import fc from 'fast-check';
import {
  comparePositions,
  decodePosition,
  encodePosition,
  FEED_START,
  FeedPosition,
  feedPage,
} from './feed-position.js';

describe('feed positions', () => {
  it.each([
    [{ xact: 0n, seq: 0n }, '0'],
    [{ xact: 1n, seq: 42n }, '10000000000000000042'],
    [{ xact: 755n, seq: 9_223_372_036_854_775_807n }, '7559223372036854775807'],
  ])('%j is %s, and back', (p, text) => {
    expect(encodePosition(p)).toBe(text);
    expect(decodePosition(text)).toEqual(p);
  });

  it('orders as (xact, seq) does', () =>
    fc.assert(
      fc.property(
        fc.bigInt(0n, 2n ** 64n - 1n),
        fc.bigInt(0n, 2n ** 63n - 1n),
        fc.bigInt(0n, 2n ** 64n - 1n),
        fc.bigInt(0n, 2n ** 63n - 1n),
        (x1, s1, x2, s2) => {
          const [a, b] = [
            { xact: x1, seq: s1 },
            { xact: x2, seq: s2 },
          ];
          const numeric = BigInt(encodePosition(a)) - BigInt(encodePosition(b));
          expect(Math.sign(Number(numeric))).toBe(comparePositions(a, b));
        },
      ),
    ));

  it.each(['', '-1', '01', '1.5', '1e3', ' 1', 'abc', '9'.repeat(41), '0x10', String(2n ** 64n * 10n ** 19n)])(
    'after=%j is refused, naming after',
    (text) => {
      expect(() => decodePosition(text)).toThrow(/^after /);
    },
  );

  it('a seq beyond bigint is refused', () => expect(() => decodePosition('19999999999999999999')).toThrow(/^after /));
});

/**
 * A model of PostgreSQL transactions interleaved at random: each takes its id at its first write
 * (ids ascending), writes callbacks (seq ascending, shared by all), and commits or aborts in any
 * order. A reader pages the feed at random moments, passing back the `next` it got. The horizon
 * is what store/feed-page.ts reads from its snapshot: the smallest id still running, or the
 * next id to hand out when none is.
 */
type Op =
  | { kind: 'begin' }
  | { kind: 'write'; t: number }
  | { kind: 'commit'; t: number }
  | { kind: 'abort'; t: number }
  | { kind: 'read'; limit: number };
type Row = FeedPosition & { id: number };

const ops = fc.array(
  fc.oneof(
    { arbitrary: fc.constant<Op>({ kind: 'begin' }), weight: 2 },
    { arbitrary: fc.nat(7).map<Op>((t) => ({ kind: 'write', t })), weight: 3 },
    { arbitrary: fc.nat(7).map<Op>((t) => ({ kind: 'commit', t })), weight: 2 },
    { arbitrary: fc.nat(7).map<Op>((t) => ({ kind: 'abort', t })), weight: 1 },
    { arbitrary: fc.integer({ min: 1, max: 4 }).map<Op>((limit) => ({ kind: 'read', limit })), weight: 2 },
  ),
  { maxLength: 80, size: 'max' },
);

type Reader = (visible: Row[], horizon: bigint, after: FeedPosition, limit: number) => Row[];

/**
 * Runs the ops, then ends every transaction and reads to the end; returns what was committed and
 * what the reader saw.
 */
function simulate(list: Op[], read: Reader): { committed: Row[]; seen: Row[]; pagesAscending: boolean } {
  let nextXid = 3n;
  let nextSeq = 1n;
  let ids = 0;
  const running: { xid: bigint | null; rows: Row[] }[] = [];
  const committed: Row[] = [];
  const seen: Row[] = [];
  let after = FEED_START;
  let pagesAscending = true;
  const horizon = () => running.reduce((min, t) => (t.xid !== null && t.xid < min ? t.xid : min), nextXid);
  const page = (limit: number) => {
    const got = read(committed, horizon(), after, limit);
    for (const r of got) {
      if (comparePositions(r, after) <= 0) pagesAscending = false;
      after = r;
    }
    seen.push(...got);
    return got.length;
  };
  for (const op of list) {
    if (op.kind === 'begin') running.push({ xid: null, rows: [] });
    if (op.kind === 'read') page(op.limit);
    if (op.kind === 'begin' || op.kind === 'read' || running.length === 0) continue;
    const i = op.t % running.length;
    const t = running[i];
    if (op.kind === 'write') {
      if (t.xid === null) t.xid = nextXid++;
      t.rows.push({ id: ids++, xact: t.xid, seq: nextSeq++ });
    } else {
      running.splice(i, 1);
      if (op.kind === 'commit') committed.push(...t.rows);
    }
  }
  for (const t of running.splice(0)) committed.push(...t.rows);
  while (page(3) > 0);
  return { committed, seen, pagesAscending };
}

describe('the feed position rule against interleaved transactions', () => {
  it('a reader passing next sees every committed callback exactly once, in ascending positions', () =>
    fc.assert(
      fc.property(ops, (list) => {
        const { committed, seen, pagesAscending } = simulate(list, feedPage);
        expect(pagesAscending).toBe(true);
        expect(seen.map((r) => r.id)).toEqual([...committed].sort(comparePositions).map((r) => r.id));
      }),
      { numRuns: 2000, seed: 33 },
    ));

  it('the naive rule (committed rows in seq order) skips a callback the model finds', () => {
    const naive: Reader = (visible, _horizon, after, limit) =>
      visible
        .filter((r) => r.seq > after.seq)
        .sort((a, b) => (a.seq < b.seq ? -1 : 1))
        .slice(0, limit);
    const run = fc.check(
      fc.property(ops, (list) => {
        const { committed, seen } = simulate(list, naive);
        return seen.length === committed.length;
      }),
      { numRuns: 2000, seed: 33 },
    );
    expect(run.failed).toBe(true);
  });

  it('ordering by transaction id without the horizon skips one too', () => {
    const noHorizon: Reader = (visible, _horizon, after, limit) => feedPage(visible, 2n ** 64n, after, limit);
    const run = fc.check(
      fc.property(ops, (list) => {
        const { committed, seen } = simulate(list, noHorizon);
        return seen.length === committed.length;
      }),
      { numRuns: 2000, seed: 33 },
    );
    expect(run.failed).toBe(true);
  });
});
