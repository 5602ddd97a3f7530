import { CallbackRetention, RETENTION_INTERVAL_MS } from '../src/operations/callback-retention.js';
import { Receiver } from './support/receiver.js';
import { companyWithCallback, createPartner, harness, TestApp, until } from './support/harness.js';

describe('retention (CALLBACK_RETENTION=1s)', () => {
  let t: TestApp;
  let rx: Receiver;

  const e2e = harness(
    { CALLBACK_RETENTION: '1s', CALLBACK_RETRY_SCHEDULE: '100ms' },
    { configure: (b) => b.overrideProvider(RETENTION_INTERVAL_MS).useValue(300), partner: null },
  );
  beforeAll(() => {
    ({ t, rx } = e2e);
    rx.answer = (hit, _req, res) => {
      if (hit.path === '/fail') res.writeHead(500).end();
      // Retry-After is honoured as a minimum: this callback stays pending for the whole test.
      else if (hit.path === '/later') res.writeHead(503, { 'retry-after': '3600' }).end();
      else res.writeHead(204).end();
    };
  });

  const count = async (table: string, where: string, params: unknown[]) =>
    Number((await t.sql<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`, params))[0].n);

  it('deletes delivered callbacks and their attempts in the background; keeps failed and pending ones', async () => {
    const p = await createPartner(t);
    const ok = await companyWithCallback(t, p, rx.url('/ok'));
    const failing = await companyWithCallback(t, p, rx.url('/fail'));
    const later = await companyWithCallback(t, p, rx.url('/later'));
    const delivered = [await ok.change(), await ok.change(), await ok.change()];
    const failed = await failing.change();
    const pending = await later.change();
    // The failed one's two attempts and the pending one's first are on record; the delivered ones are
    // delivered (or already pruned: retention may come for them within a second of delivery).
    await until(async () => (await count('callback_attempts', 'callback_id = ANY($1)', [[failed, pending]])) === 3, {
      what: 'three attempts recorded',
    });
    await until(async () => (await count('callbacks', `id = ANY($1) AND status <> 'delivered'`, [delivered])) === 0, {
      what: 'three delivered',
    });
    expect(await failing.statuses()).toEqual(['failed']);
    expect(await later.statuses()).toEqual(['pending']);

    await until(async () => (await count('callbacks', 'id = ANY($1)', [delivered])) === 0, {
      what: 'delivered callbacks pruned',
    });
    expect(await count('callback_attempts', 'callback_id = ANY($1)', [delivered])).toBe(0);
    // After a whole pass of our own (null while the background pass holds the lock: try again),
    // past the 1 s retention, the others are all still there.
    await until(
      async () =>
        (await count('callbacks', `id = ANY($1) AND created_at < now() - interval '1 second'`, [[failed, pending]])) ===
        2,
      { what: 'older than the retention' },
    );
    await until(() => t.app.get(CallbackRetention).prune(), { what: 'a retention pass' });
    expect(await count('callbacks', 'id = ANY($1)', [[failed, pending]])).toBe(2);
    expect(await count('callback_attempts', 'callback_id = ANY($1)', [[failed, pending]])).toBe(3);
    await t.admin('get', `/admin/v1/callbacks/${failed}`).expect(200);
    await t.admin('get', `/admin/v1/callbacks/${delivered[0]}`).expect(404);

    const metrics = (await t.http().get('/metrics').expect(200)).text;
    const pruned = (table: string) =>
      Number(new RegExp(`funding_retention_pruned_rows_total\\{table="${table}"\\} (\\d+)`).exec(metrics)?.[1]);
    expect(pruned('callbacks')).toBeGreaterThanOrEqual(3);
    expect(pruned('callback_attempts')).toBeGreaterThanOrEqual(3);
  });

  it('keeps a callback delivered more recently than the retention', async () => {
    const p = await createPartner(t, 'Recent');
    const ok = await companyWithCallback(t, p, rx.url('/ok'));
    const id = await ok.change();
    await until(async () => (await ok.statuses())[0] === 'delivered', { what: 'delivered' });
    // Its delivery moved an hour ahead: younger than 1 s for the rest of the test, whatever the load.
    await t.sql(`UPDATE callbacks SET delivered_at = now() + interval '1 hour' WHERE id = $1`, [id]);
    // A pass of our own (null while the background pass holds the lock: try again).
    await until(() => t.app.get(CallbackRetention).prune(), { what: 'a retention pass' });
    expect(await count('callbacks', 'id = $1', [id])).toBe(1);
  });

  it('deletes idempotency keys older than 24 h and keeps younger ones', async () => {
    const insert = (key: string, age: string) =>
      t.sql(
        `INSERT INTO idempotency_keys (scope, key, request_hash, status_code, response, created_at) VALUES ('s', $1, 'h', 201, '{}', now() - $2::interval)`,
        [key, age],
      );
    await insert('old', '25 hours');
    await insert('young', '23 hours');
    await until(async () => (await count('idempotency_keys', `key = 'old'`, [])) === 0, {
      what: 'old idempotency key pruned',
    });
    expect(await count('idempotency_keys', `key = 'young'`, [])).toBe(1);
  });

  it('deletes portal links a day past their expiry and sessions ended, idle or too old; keeps live ones and links expired since', async () => {
    const p = await createPartner(t, 'Portal');
    const link = (hash: string, expiresAt: string) =>
      t.sql(`INSERT INTO portal_links (token_hash, partner_id, expires_at) VALUES ($1, $2, now() + $3::interval)`, [
        hash,
        p.id,
        expiresAt,
      ]);
    await link('link-expired-two-days', '-2 days');
    await link('link-used-expired-two-days', '-2 days');
    await t.sql(
      `UPDATE portal_links SET used_at = expires_at - interval '1 minute' WHERE token_hash = 'link-used-expired-two-days'`,
    );
    await link('link-expired-an-hour', '-1 hour');
    await link('link-live', '10 minutes');
    const session = (hash: string, columns: string) =>
      t.sql(
        `INSERT INTO portal_sessions (token_hash, partner_id, csrf_secret, created_at, last_seen_at, ended_at) SELECT $1, $2, 's', ${columns}`,
        [hash, p.id],
      );
    await session('session-ended', `now() - interval '1 hour', now(), now() - interval '1 minute'`);
    await session('session-idle', `now() - interval '1 hour', now() - interval '31 minutes', NULL`);
    await session('session-too-old', `now() - interval '8 hours 1 minute', now(), NULL`);
    await session('session-live', `now() - interval '1 hour', now() - interval '1 minute', NULL`);
    const left = async (table: string) =>
      (
        await t.sql<{ token_hash: string }>(
          `SELECT token_hash FROM ${table} WHERE partner_id = $1 ORDER BY token_hash`,
          [p.id],
        )
      ).map((r) => r.token_hash);
    await until(async () => (await left('portal_sessions')).length === 1 && (await left('portal_links')).length === 2, {
      what: 'portal rows pruned',
    });
    expect(await left('portal_links')).toEqual(['link-expired-an-hour', 'link-live']);
    expect(await left('portal_sessions')).toEqual(['session-live']);
    const metrics = (await t.http().get('/metrics').expect(200)).text;
    expect(metrics).toMatch(/funding_retention_pruned_rows_total\{table="portal_links"\} 2\b/);
    expect(metrics).toMatch(/funding_retention_pruned_rows_total\{table="portal_sessions"\} 3\b/);
  });

  it('prunes in one process at a time: a pass finds the lock taken and does nothing', async () => {
    // The test's own session takes the retention lock (src/operations), as another process's pass would.
    const id = 727_002;
    await until(async () => (await t.sql<{ l: boolean }>('SELECT pg_try_advisory_lock($1) AS l', [id]))[0].l, {
      what: 'retention lock',
    });
    try {
      expect(await t.app.get(CallbackRetention).prune()).toBeNull();
    } finally {
      await t.sql('SELECT pg_advisory_unlock($1)', [id]);
    }
  });
});
