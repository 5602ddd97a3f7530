/**
 * ADMIN_TOKEN is the bootstrap operator `admin`, revoked like any operator: within a second in
 * every process, and for good (after restarts). Only a value never used before bootstraps `admin`
 * again (the break-glass path), with an `operator.bootstrap` audit entry written at start.
 */
import { buildService, sparePort, startService, stop, workerEnv } from './support/processes.js';
import { ADMIN_TOKEN, harness, TestApp } from './support/harness.js';

const NEW_TOKEN = 'break-glass-token-9876543210';

describe('the bootstrap token', () => {
  let t: TestApp;
  let child: Awaited<ReturnType<typeof startService>> | undefined;
  let base = '';

  const bootstrapEntries = async () =>
    (await t.sql<{ n: string }>(`SELECT count(*) AS n FROM audit_entries WHERE action = 'operator.bootstrap'`)).map(
      (r) => Number(r.n),
    )[0];
  /** A second process (ROLE=api) on the same database, with this ADMIN_TOKEN. */
  const restartChild = async (adminToken: string) => {
    if (child) await stop(child, 'SIGTERM');
    const port = await sparePort();
    child = await startService({ ...workerEnv(t), ROLE: 'api', PORT: String(port), ADMIN_TOKEN: adminToken });
    base = `http://127.0.0.1:${port}`;
    return child;
  };
  const status = async (token: string) =>
    (await fetch(`${base}/admin/v1/operators`, { headers: { authorization: `Bearer ${token}` } })).status;

  beforeAll(() => buildService(), 180_000);
  // The second process stops before the app closes (hooks run in the order declared).
  afterAll(async () => {
    if (child) await stop(child, 'SIGTERM');
  });
  const e2e = harness({}, { partner: null });
  beforeAll(() => ({ t } = e2e));

  it('is bootstrapped once at the first start (one operator.bootstrap entry), not again by a process with the same value', async () => {
    expect(await bootstrapEntries()).toBe(1);
    await restartChild(ADMIN_TOKEN);
    expect(await status(ADMIN_TOKEN)).toBe(200);
    expect(await bootstrapEntries()).toBe(1);
    const [row] = await t.sql<{ token_hash: string | null }>(`SELECT token_hash FROM operators WHERE name = 'admin'`);
    expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
  }, 60_000);

  it('is revoked like any operator: refused at once here and within a second in the other process', async () => {
    const alice = (await t.admin('post', '/admin/v1/operators', { name: 'alice', role: 'admin' }).expect(201)).body as {
      token: string;
    };
    const [admin] = await t.sql<{ id: string }>(`SELECT id FROM operators WHERE name = 'admin'`);
    expect(await status(ADMIN_TOKEN)).toBe(200);
    const at = Date.now();
    await t.http().delete(`/admin/v1/operators/${admin.id}`).set('Authorization', `Bearer ${alice.token}`).expect(204);
    await t.admin('get', '/admin/v1/operators').expect(401);
    while ((await status(ADMIN_TOKEN)) !== 401) {
      expect(Date.now() - at).toBeLessThan(1_000);
      await new Promise((r) => setTimeout(r, 20));
    }
    const [entry] = await t.sql<{ action: string; target_id: string }>(
      `SELECT action, target_id FROM audit_entries ORDER BY seq DESC LIMIT 1`,
    );
    expect(entry).toEqual({ action: 'operator.revoke', target_id: admin.id });
  }, 30_000);

  it('stays refused after a restart with the same value (the process says so), and writes no entry', async () => {
    const restarted = await restartChild(ADMIN_TOKEN);
    expect(await status(ADMIN_TOKEN)).toBe(401);
    expect(restarted.output.join('')).toMatch(/ADMIN_TOKEN was revoked and stays refused/);
    expect(await bootstrapEntries()).toBe(1);
  }, 60_000);

  it('a value never used before is admin again (the break-glass path): one operator.bootstrap entry; the revoked value stays refused', async () => {
    await restartChild(NEW_TOKEN);
    expect(await status(NEW_TOKEN)).toBe(200);
    // Every process looks the token up: the one started with the old value takes the new one too.
    await t.http().get('/admin/v1/operators').set('Authorization', `Bearer ${NEW_TOKEN}`).expect(200);
    expect(await status(ADMIN_TOKEN)).toBe(401);
    expect(await bootstrapEntries()).toBe(2);
    const [entry] = await t.sql<{ name: string; before: object; after: object }>(
      `SELECT o.name, a.before, a.after FROM audit_entries a JOIN operators o ON o.id = a.operator_id WHERE a.action = 'operator.bootstrap' ORDER BY a.seq DESC LIMIT 1`,
    );
    expect(entry).toEqual({
      name: 'admin',
      before: { bootstrapToken: 'replaced', revokedAt: expect.any(String) },
      after: { bootstrapToken: 'set', revokedAt: null },
    });
    const admin = (
      await fetch(`${base}/admin/v1/operators`, { headers: { authorization: `Bearer ${NEW_TOKEN}` } }).then(
        (r) => r.json() as Promise<{ items: { name: string; revokedAt: string | null }[] }>,
      )
    ).items.find((o) => o.name === 'admin');
    expect(admin?.revokedAt).toBeNull();
  }, 60_000);

  it('a value it held before stays refused, also after the break-glass value replaced it', async () => {
    const restarted = await restartChild(ADMIN_TOKEN);
    expect(await status(ADMIN_TOKEN)).toBe(401);
    expect(await status(NEW_TOKEN)).toBe(200);
    expect(restarted.output.join('')).toMatch(/ADMIN_TOKEN was replaced before and stays refused/);
    expect(await bootstrapEntries()).toBe(2);
  }, 60_000);
});
