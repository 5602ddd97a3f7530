import { Batcher, SerialBatcher } from './batcher.js';

describe('Batcher', () => {
  it('runs calls made in the same tick as one batch and hands each caller its own result', async () => {
    const run = jest.fn((xs: number[]) => Promise.resolve(xs.map((x) => x * 2)));
    const b = new Batcher(run);
    expect(await Promise.all([b.call(1), b.call(2), b.call(3)])).toEqual([2, 4, 6]);
    expect(run).toHaveBeenCalledTimes(1);
    expect(await b.call(4)).toBe(8);
    expect(run).toHaveBeenCalledTimes(2);
  });

  it('splits at the batch limit and rejects every caller of a failed batch', async () => {
    const run = jest.fn((xs: number[]) => (xs.includes(0) ? Promise.reject(new Error('boom')) : Promise.resolve(xs)));
    const b = new Batcher(run, 2);
    expect(await Promise.all([b.call(1), b.call(2), b.call(3)])).toEqual([1, 2, 3]);
    expect(run.mock.calls.map((c) => c[0])).toEqual([[1, 2], [3]]);
    await expect(Promise.all([b.call(0), b.call(5)])).rejects.toThrow('boom');
  });

  it('rejects the callers of a batch whose run throws before it returns a promise, and goes on', async () => {
    const run = jest.fn((xs: number[]) => {
      if (xs.includes(0)) throw new Error('at once');
      return Promise.resolve(xs);
    });
    const b = new SerialBatcher(run, 500);
    await expect(b.call(0)).rejects.toThrow('at once');
    expect(await b.call(7)).toBe(7);
  });

  it('serial: runs one batch at a time, and the calls made meanwhile together right after it', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const run = jest.fn(async (xs: number[]) => {
      if (xs.includes(1)) await held;
      return xs;
    });
    const b = new SerialBatcher(run, 500);
    const first = b.call(1);
    await new Promise((r) => setImmediate(r));
    const later = [b.call(2), b.call(3)];
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    // The first batch is still under way: nothing else has run.
    expect(run).toHaveBeenCalledTimes(1);
    release();
    expect(await Promise.all([first, ...later])).toEqual([1, 2, 3]);
    expect(run.mock.calls.map((c) => c[0])).toEqual([[1], [2, 3]]);
  });

  it('with gatherMs, takes the calls made within that time of the first into its batch', async () => {
    const run = jest.fn((xs: number[]) => Promise.resolve(xs));
    const b = new Batcher(run, 500, 30);
    const first = b.call(1);
    await new Promise((r) => setTimeout(r, 5));
    expect(await Promise.all([first, b.call(2)])).toEqual([1, 2]);
    expect(run.mock.calls.map((c) => c[0])).toEqual([[1, 2]]);
  });
});
