import { callbackOrigin } from '../src/callbacks/callback-destination.js';
import { scratchDatabase, ScratchDatabase, seedCompany } from './support/scratch-database.js';

/**
 * One table of URLs and their destinations: PostgreSQL's `callback_origin` (which fills
 * `callbacks.destination` for every row) and callbackOrigin (TypeScript) must both give each.
 */
const ORIGINS: [url: string, origin: string][] = [
  ['https://hooks.example.com/a/b?token=secret#x', 'https://hooks.example.com'],
  ['https://hooks.example.com:8443/a', 'https://hooks.example.com:8443'],
  ['https://hooks.example.com:443/a', 'https://hooks.example.com'],
  ['https://hooks.example.com:4430', 'https://hooks.example.com:4430'],
  ['HTTPS://Hooks.Example.COM/Path', 'https://hooks.example.com'],
  ['http://127.0.0.1:8080/cb', 'http://127.0.0.1:8080'],
  ['http://127.0.0.1:80/cb', 'http://127.0.0.1'],
  ['http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
  ['http://h.example:443/x', 'http://h.example:443'],
  ['https://h.example:80/x', 'https://h.example:80'],
  ['https://[2001:db8::1]:444/x?y', 'https://[2001:db8::1]:444'],
  ['https://[2001:db8::1]:443/x', 'https://[2001:db8::1]'],
  ['https://h.example?q=/a', 'https://h.example'],
  ['https://h.example#frag/a', 'https://h.example'],
  ['https://h.example/', 'https://h.example'],
  ['not a url', 'not a url'],
  ['mailto:ops@h.example', 'mailto:ops@h.example'],
  ['', ''],
];

describe('the origin of a callback URL, in SQL and TypeScript', () => {
  let s: ScratchDatabase;
  beforeAll(async () => {
    s = await scratchDatabase();
  });
  afterAll(async () => {
    await s?.close();
  });

  it.each(ORIGINS)('TypeScript: %j → %j', (url, origin) => expect(callbackOrigin(url)).toBe(origin));

  it('SQL (callback_origin): every URL of the table to its origin', async () => {
    const { rows } = await s.pool.query<{ origin: string }>(
      `SELECT callback_origin(u) AS origin FROM unnest($1::text[]) WITH ORDINALITY AS x(u, n) ORDER BY n`,
      [ORIGINS.map(([u]) => u)],
    );
    expect(rows.map((r) => r.origin)).toEqual(ORIGINS.map(([, o]) => o));
  });

  it('is inlined where it is used (no function call of its own per row), and gives NULL for NULL', async () => {
    const { rows } = await s.pool.query(
      `EXPLAIN (VERBOSE, FORMAT JSON) SELECT callback_origin(u) FROM unnest($1::text[]) AS x(u)`,
      [['https://h.example/']],
    );
    const output: string[] = rows[0]['QUERY PLAN'][0].Plan.Output;
    expect(output).toEqual([
      expect.stringMatching(/^regexp_replace\(regexp_replace\(COALESCE\(lower\("substring"\(u, /),
    ]);
    expect((await s.pool.query(`SELECT callback_origin(NULL) AS o`)).rows).toEqual([{ o: null }]);
  });

  it('fills callbacks.destination with the partner and it, and makes the destination known to admission (the AFTER INSERT trigger)', async () => {
    const { partnerId, companyId } = await seedCompany(s.pool);
    const { rows } = await s.pool.query(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
       VALUES ($1, $2, 0, 'https://Hooks.Example:443/t?k=1', '{}', 'pending', now()) RETURNING destination`,
      [partnerId, companyId],
    );
    // The destination is the partner's origin: its id, a space, the origin.
    expect(rows).toEqual([{ destination: `${partnerId} https://hooks.example` }]);
    const known = await s.pool.query(`SELECT key, partner_id, origin FROM destinations`);
    expect(known.rows).toEqual([
      { key: `${partnerId} https://hooks.example`, partner_id: partnerId, origin: 'https://hooks.example' },
    ]);
  });
});
