import { Candidate, FRESH_MS } from './admission-plan.js';
import { CatchUp } from './catch-up.js';
import { newDestination } from './destination-window.js';

const state = newDestination({ initial: 2, max: 40, threshold: 3, probe: { first: 1000, last: 8000 } });
const NOW = 1_000_000;
/** A candidate whose oldest due callback is `age` ms old at NOW. */
const due = (key: string, age: number): Candidate => ({ key, state, sending: 0, waiting: 0, oldestDue: NOW - age });
const behind = (n: number) => Array.from({ length: n }, (_, i) => due(`d${i}`, 5 * FRESH_MS + i));

describe('CatchUp: which destinations catching up a pass reads', () => {
  it('leaves none unread while they are no more than the read-ahead', () => {
    const c = new CatchUp();
    c.note(1, new Set(), behind(3), NOW);
    expect([...c.unread(3)]).toEqual([]);
    expect([...c.unread(2)]).toHaveLength(1);
  });

  it('takes in only destinations behind: fresh ones are read every pass', () => {
    const c = new CatchUp();
    c.note(1, new Set(), [due('fresh', FRESH_MS - 1), due('behind', FRESH_MS)], NOW);
    expect([...c.unread(0)]).toEqual(['behind']);
  });

  it('reads the least recently read first, so each is read within ⌈behind / read-ahead⌉ passes', () => {
    const c = new CatchUp();
    const all = behind(10);
    c.note(1, new Set(), all, NOW);
    const read = new Map<string, number>();
    for (let pass = 2; pass <= 5; pass++) {
      const unread = c.unread(3);
      expect(unread.size).toBe(7);
      const candidates = all.filter((d) => !unread.has(d.key));
      candidates.forEach((d) => read.set(d.key, (read.get(d.key) ?? 0) + 1));
      c.note(pass, unread, candidates, NOW);
    }
    // 4 passes of 3 over 10: every one read, none twice before the others had their turn but 2.
    expect(read.size).toBe(10);
    expect([...read.values()].filter((n) => n === 2)).toHaveLength(2);
  });

  it(
    'lets one go when a pass that read it finds nothing due or it caught up, ' +
      'and keeps the unread ones as they were',
    () => {
      const c = new CatchUp();
      c.note(1, new Set(), [due('a', 9 * FRESH_MS), due('b', 8 * FRESH_MS), due('c', 7 * FRESH_MS)], NOW);
      // All read at pass 1: the first in order is read next, the others wait.
      expect([...c.unread(1)]).toEqual(['b', 'c']);
      c.note(2, new Set(['b', 'c']), [], NOW); // a had nothing due
      expect([...c.unread(0)]).toEqual(['b', 'c']);
      expect(c.oldestDue(new Set(['b', 'c']))).toBe(NOW - 8 * FRESH_MS);
      c.note(3, new Set(['c']), [due('b', FRESH_MS - 1)], NOW); // b caught up: its oldest due is fresh
      expect([...c.unread(0)]).toEqual(['c']);
    },
  );
});
