import { Lru } from './lru.js';

describe('Lru', () => {
  it('keeps at most its limit, dropping the least recently used first and telling whom', () => {
    const dropped: [string, number][] = [];
    const lru = new Lru<string, number>(2, (v, k) => dropped.push([k, v]));
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.get('a')).toBe(1);
    lru.set('c', 3);
    expect(dropped).toEqual([['b', 2]]);
    expect([...lru]).toEqual([
      ['a', 1],
      ['c', 3],
    ]);
    expect(lru.size).toBe(2);
  });

  it('replaces a kept entry in place of growing, and forgets one deleted without dropping it', () => {
    const dropped: string[] = [];
    const lru = new Lru<string, number>(2, (_v, k) => dropped.push(k));
    lru.set('a', 1);
    lru.set('a', 2);
    lru.set('b', 3);
    expect(dropped).toEqual([]);
    expect(lru.get('a')).toBe(2);
    expect(lru.delete('b')).toBe(true);
    expect(lru.has('b')).toBe(false);
    expect(lru.get('b')).toBeUndefined();
    expect(dropped).toEqual([]);
  });

  it('refuses a limit below one', () => {
    expect(() => new Lru(0)).toThrow('at least one entry');
  });
});
