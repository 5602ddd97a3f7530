import { JOB_CALLBACKS, jobsOf } from './callback-queue';

const ids = (n: number) => Array.from({ length: n }, (_, i) => `c${i}`);
const sizes = (jobs: string[][]) => jobs.map((j) => j.length);

describe('jobsOf', () => {
  it.each([
    // callbacks, live worker processes, job sizes
    [1, 1, [1]],
    [20, 1, [20]],
    [45, 1, [20, 20, 5]],
    [20, 4, [5, 5, 5, 5]],
    [10, 4, [3, 3, 3, 1]],
    [3, 8, [1, 1, 1]],
    [200, 4, [20, 20, 20, 20, 20, 20, 20, 20, 20, 20]],
    [7, 0, [7]], // no worker announced (admission admits nothing then; guarded anyway)
  ])('%i callbacks, %i workers → jobs of %j', (n, workers, expected) => {
    const jobs = jobsOf(ids(n), workers);
    expect(sizes(jobs)).toEqual(expected);
    expect(jobs.flat()).toEqual(ids(n)); // every callback once, in admission order
    expect(Math.max(...sizes(jobs))).toBeLessThanOrEqual(JOB_CALLBACKS);
  });

  it('makes no job of nothing', () => {
    expect(jobsOf([], 3)).toEqual([]);
  });
});
