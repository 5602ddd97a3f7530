import { CallbackQueue } from '../src/delivery/callback-queue.js';
import { DASHBOARD_TABS, DashboardStore } from '../src/callbacks/store/dashboard-reads.js';
import { Receiver } from './support/receiver.js';
import { ADMIN_TOKEN, companyWithCallback, createPartner, harness, TestApp, until } from './support/harness.js';

const BASIC = `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`;

describe("the dashboard's window on delivered callbacks", () => {
  let t: TestApp;
  let rx: Receiver;
  const ids: string[] = [];
  const board = (path: string) => t.http().get(`/admin/queues/api${path}`).set('Authorization', BASIC);
  const completed = async () => {
    const q = (await board('/queues?activeQueue=callbacks&status=completed&page=1&jobsPerPage=50').expect(200)).body
      .queues[0];
    return { count: q.counts.completed as number, ids: (q.jobs as { id: string }[]).map((j) => j.id) };
  };
  /** The delivered callbacks, newest delivery first, as PostgreSQL orders them. */
  const newestDelivered = async () =>
    (
      await t.sql<{ id: string }>(
        `SELECT id FROM callbacks WHERE status = 'delivered' AND delivered_at > now() - interval '1 hour' ORDER BY delivered_at DESC, seq DESC`,
      )
    ).map((r) => r.id);
  const status = async (id: string) =>
    (await t.sql<{ status: string }>('SELECT status FROM callbacks WHERE id = $1', [id]))[0].status;

  const e2e = harness({ DASHBOARD_KEEP_COMPLETED: '2', DASHBOARD_KEEP_COMPLETED_FOR: '1h' }, { partner: null });
  beforeAll(async () => {
    ({ t, rx } = e2e);
    const p = await createPartner(t);
    const cb = await companyWithCallback(t, p, rx.url('/cb'));
    for (let i = 0; i < 4; i++) {
      const id = await cb.change();
      ids.push(id);
      await until(async () => (await status(id)) === 'delivered', { what: `callback ${i + 1} delivered` });
    }
    // Redis holds no finished job (as in delivery core v2): the window is PostgreSQL's.
    await t.app.get(CallbackQueue).queue.clean(0, 0, 'completed');
  });

  it('shows the DASHBOARD_KEEP_COMPLETED most recently delivered callbacks', async () => {
    expect(await completed()).toEqual({ count: 2, ids: (await newestDelivered()).slice(0, 2) });
  });

  it('drops a callback delivered longer ago than DASHBOARD_KEEP_COMPLETED_FOR', async () => {
    const [newest] = await newestDelivered();
    await t.sql(`UPDATE callbacks SET delivered_at = now() - interval '61 minutes' WHERE id = $1`, [newest]);
    const shown = await completed();
    expect(shown.ids).not.toContain(newest);
    expect(shown).toEqual({ count: 2, ids: (await newestDelivered()).slice(0, 2) });
  });

  it('still shows any callback by its id, delivered outside the window or not', async () => {
    const shown = (await completed()).ids;
    const outside = ids.find((id) => !shown.includes(id))!;
    const job = (await board(`/queues/callbacks/${outside}`).expect(200)).body;
    expect([job.status, job.job.id]).toEqual(['completed', outside]);
    await board('/queues/callbacks/00000000-0000-4000-8000-000000000000').expect(404);
    await board('/queues/callbacks/not-a-callback-id').expect(404);
    expect((await board('/queues/callbacks/not-a-callback-id/logs').expect(200)).body).toEqual([]);
  });

  it('shows a redelivered callback again once delivered again, as the newest', async () => {
    await t.admin('post', `/admin/v1/callbacks/${ids[0]}/redeliver`).expect(202);
    await until(() => rx.hits.filter((h) => h.headers['webhook-id'] === ids[0]).length === 2, {
      what: 'the redelivery',
    });
    await until(async () => (await status(ids[0])) === 'delivered', { what: 'delivered again' });
    expect((await completed()).ids[0]).toBe(ids[0]);
  });

  it('reads every tab by an index range, whatever the size of the table', async () => {
    const plans: string[] = [];
    const explain = async (sql: string, params?: unknown[]) => {
      plans.push(
        (await t.sql<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params)).map((r) => r['QUERY PLAN']).join('\n'),
      );
      return [{}];
    };
    const store = new DashboardStore(
      {
        query: explain,
        transaction: (_level: string, run: (m: unknown) => unknown) => run({ query: explain }),
      } as never,
      {
        dashboardKeep: { completed: { count: 2, ageMs: 3_600_000 } },
      },
    );
    // With sequential scans priced out, any read an index cannot serve shows up as one.
    await t.sql('SET enable_seqscan = off');
    try {
      await store.counts();
      for (const tab of DASHBOARD_TABS) await store.page(tab, 0, 9);
      await store.job(ids[0]);
      await store.log(ids[0]);
      await store.delayedIds(1000);
    } finally {
      await t.sql('RESET enable_seqscan');
    }
    expect(plans).toHaveLength(10);
    for (const plan of plans) expect(plan).not.toMatch(/Seq Scan/);
    // Each tab (counted, then one page each) is a range of the index that orders it: pending
    // callbacks by next_attempt_at (its UTC form, the dashboard's own index), delivered ones by
    // delivered_at, sending and failed by status.
    const ranges = {
      active: /Index Cond: \(status = 'sending'::text\)/,
      waiting: /Index Cond: \(\(next_attempt_at AT TIME ZONE 'UTC'::text\) <= \(now\(\) AT TIME ZONE 'UTC'::text\)\)/,
      completed: /Index Cond: \(delivered_at >= \(now\(\) - /,
      failed: /Index Cond: \(status = 'failed'::text\)/,
      delayed: /Index Cond: \(\(next_attempt_at AT TIME ZONE 'UTC'::text\) > \(now\(\) AT TIME ZONE 'UTC'::text\)\)/,
    };
    const [counts, ...pages] = plans;
    DASHBOARD_TABS.forEach((tab, i) => {
      expect(counts).toMatch(ranges[tab]);
      expect(pages[i]).toMatch(ranges[tab]);
      expect(pages[i]).not.toMatch(/Sort/);
      // Each row shown names its partner: one lookup by the partners key per row, never a scan.
      expect(pages[i]).toMatch(/Index Scan using partners_pkey on partners/);
    });
  });
});
