import { CredentialCache } from './credential-cache.js';

/** A clock the test moves by hand. */
function fakeClock(start = 1_000) {
  let now = start;
  return { read: () => now, advance: (ms: number) => (now += ms), set: (ms: number) => (now = ms) };
}

describe('CredentialCache', () => {
  it('trusts a kept value for its trust time from the start of the lookup, then no more', () => {
    const clock = fakeClock();
    const cache = new CredentialCache<string>(500, 10, clock.read);
    const lookup = cache.begin();
    clock.advance(300); // the lookup took 300 ms: the 500 count from its start
    cache.keep(lookup, 'h', 'alice');
    clock.advance(199);
    expect(cache.trusted('h', cache.begin())).toBe('alice');
    clock.advance(1);
    expect(cache.trusted('h', cache.begin())).toBeUndefined();
  });

  it('runs on its own clock: the wall clock stepped back extends nothing', () => {
    const clock = fakeClock();
    const cache = new CredentialCache<string>(500, 10, clock.read);
    const realNow = Date.now;
    try {
      cache.keep(cache.begin(), 'h', 'alice');
      clock.advance(600);
      Date.now = () => realNow() - 3_600_000; // the wall clock an hour back
      expect(cache.trusted('h', cache.begin())).toBeUndefined();
    } finally {
      Date.now = realNow;
    }
  });

  it('uses a monotonic clock unless given one (performance.now, not Date.now)', () => {
    const cache = new CredentialCache<string>(500, 10);
    const realNow = Date.now;
    try {
      cache.keep(cache.begin(), 'h', 'alice');
      Date.now = () => realNow() - 3_600_000;
      expect(cache.trusted('h', cache.begin())).toBe('alice');
      Date.now = () => realNow() + 3_600_000;
      expect(cache.trusted('h', cache.begin())).toBe('alice');
    } finally {
      Date.now = realNow;
    }
  });

  it('does not keep what a lookup under way found when a credential was forgotten meanwhile', () => {
    const clock = fakeClock();
    const cache = new CredentialCache<string>(500, 10, clock.read);
    const inFlight = cache.begin(); // e.g. a request reading the token...
    cache.forget('h'); // ...while the token is revoked in this process
    cache.keep(inFlight, 'h', 'alice'); // the read, from before the revocation, comes back
    expect(cache.trusted('h', cache.begin())).toBeUndefined();
    // A lookup begun after the forget keeps its answer.
    const after = cache.begin();
    cache.keep(after, 'h', 'bob');
    expect(cache.trusted('h', cache.begin())).toBe('bob');
  });

  it('forgets at once, and past its limit drops the least recently used', () => {
    const clock = fakeClock();
    const cache = new CredentialCache<string>(500, 2, clock.read);
    cache.keep(cache.begin(), 'a', 'A');
    cache.forget('a');
    expect(cache.trusted('a', cache.begin())).toBeUndefined();
    cache.keep(cache.begin(), 'b', 'B');
    cache.keep(cache.begin(), 'c', 'C');
    expect(cache.trusted('b', cache.begin())).toBe('B');
    cache.keep(cache.begin(), 'd', 'D'); // over the limit: c, used least recently, is dropped
    expect(['b', 'c', 'd'].map((h) => cache.trusted(h, cache.begin()))).toEqual(['B', undefined, 'D']);
  });

  it('drops what is no longer trusted as new entries come, whether or not it is looked up again', () => {
    const clock = fakeClock();
    const cache = new CredentialCache<string>(500, 10, clock.read);
    cache.keep(cache.begin(), 'a', 'A');
    cache.keep(cache.begin(), 'b', 'B');
    clock.advance(500);
    cache.keep(cache.begin(), 'c', 'C');
    expect(cache.size).toBe(1);
    expect(cache.trusted('c', cache.begin())).toBe('C');
  });
});
