import { InputColumns, microsKey } from './sql.js';

describe('InputColumns', () => {
  const input = new InputColumns<{ id: string; n: number; at: Date }>([
    { name: 'id', type: 'uuid', value: (r) => r.id },
    { name: 'n', type: 'int', value: (r) => r.n },
    { name: 'at', type: 'timestamptz', value: (r) => r.at },
  ]);
  const at = new Date(0);

  it('names, types and numbers the parameters in the order of the columns, from the first given', () => {
    expect(input.unnest('t', 4)).toBe('unnest($4::uuid[], $5::int[], $6::timestamptz[]) AS t(id, n, at)');
    expect(input.count).toBe(3);
  });

  it('gives one array per column, in the same order, each item in the order given', () => {
    expect(
      input.params([
        { id: 'a', n: 1, at },
        { id: 'b', n: 2, at },
      ]),
    ).toEqual([
      ['a', 'b'],
      [1, 2],
      [at, at],
    ]);
  });
});

describe('microsKey', () => {
  it('reads a timestamp as whole microseconds, as text', () => {
    expect(microsKey('c.lease_until')).toBe('(extract(epoch FROM c.lease_until) * 1000000)::bigint::text');
  });
});
