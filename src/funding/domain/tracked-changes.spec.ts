import { changesOf, snapshot } from './tracked-changes.js';

describe('tracked changes', () => {
  const row = { id: 'r1', status: 'pending', amount: 1000n, note: 'untracked' };

  it('reports only the tracked properties that changed, before and after', () => {
    const before = snapshot(row, ['status', 'amount']);
    const after = snapshot({ ...row, status: 'approved', note: 'changed but untracked' }, ['status', 'amount']);
    expect(changesOf('limit_requests', 'r1', before, after)).toEqual({
      table: 'limit_requests',
      id: 'r1',
      before: { status: 'pending' },
      after: { status: 'approved' },
    });
  });

  it('compares bigint amounts by value', () => {
    const before = snapshot(row, ['amount']);
    expect(changesOf('loans', 'r1', before, snapshot({ ...row, amount: BigInt('1000') }, ['amount']))).toBeNull();
    expect(changesOf('loans', 'r1', before, snapshot({ ...row, amount: 999n }, ['amount']))).toEqual({
      table: 'loans',
      id: 'r1',
      before: { amount: 1000n },
      after: { amount: 999n },
    });
  });

  it('is null when no tracked property changed', () => {
    expect(
      changesOf('companies', 'r1', snapshot(row, ['status']), snapshot({ ...row, note: 'x' }, ['status'])),
    ).toBeNull();
  });
});
