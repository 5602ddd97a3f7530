import { CallbackQueue } from '../src/delivery/callback-queue.js';
import { CallbackRelay } from '../src/delivery/callback-relay.js';
import { Receiver } from './support/receiver.js';
import { companyWithCallback, createPartner, startTestApp, TestApp, until } from './support/test-app.js';

describe("the dashboard's window on finished deliveries", () => {
  let t: TestApp;
  let rx: Receiver;
  const ids: string[] = [];
  const queue = () => t.app.get(CallbackQueue);
  const state = (id: string) => queue().queue.getJobState(id);
  const hits = (id: string) => rx.hits.filter((h) => h.headers['webhook-id'] === id).length;
  const status = async (id: string) => (await t.sql<{ status: string }>('SELECT status FROM callbacks WHERE id = $1', [id]))[0].status;
  let company: string;

  beforeAll(async () => {
    rx = await Receiver.start();
    t = await startTestApp({ DASHBOARD_KEEP_COMPLETED: '2' });
    const p = await createPartner(t);
    const cb = await companyWithCallback(t, p, rx.url('/cb'));
    company = cb.c;
    for (let i = 0; i < 4; i++) {
      const id = await cb.change();
      ids.push(id);
      await until(async () => (await state(id)) === 'completed', { what: `callback ${i + 1} completed` });
    }
  });
  afterAll(async () => {
    await t?.close();
    await rx?.close();
  });

  it('keeps only DASHBOARD_KEEP_COMPLETED delivered jobs', async () => {
    await until(async () => (await queue().queue.getCompletedCount()) === 2, { what: 'two completed jobs' });
    expect(await Promise.all(ids.map(state))).toEqual(['unknown', 'unknown', 'completed', 'completed']);
  });

  it('does not show a job that delivered nothing (a duplicate) as completed', async () => {
    await queue().add([{ id: ids[0], nextAttemptAt: null, message: 0, companyId: company, destination: rx.url('') }]);
    await until(async () => (await state(ids[0])) === 'unknown', { what: 'the duplicate job gone' });
    expect(await queue().queue.getCompletedCount()).toBe(2);
    expect(hits(ids[0])).toBe(1);
  });

  it('redelivers a callback whose completed job is still kept', async () => {
    await t.admin('post', `/admin/v1/callbacks/${ids[3]}/redeliver`).expect(202);
    await until(() => hits(ids[3]) === 2, { what: 'the redelivery' });
    await until(async () => (await status(ids[3])) === 'delivered', { what: 'delivered again' });
  });

  it('re-adds an overdue pending callback even when its finished job is still kept', async () => {
    // As after a redelivery that met its job in flight: pending, enqueued, its old job finished.
    await until(async () => (await state(ids[2])) === 'completed', { what: 'a kept completed job' });
    await t.sql(`UPDATE callbacks SET status = 'pending', enqueued_at = now(), next_attempt_at = now() - interval '1 minute' WHERE id = $1`, [ids[2]]);
    await t.app.get(CallbackRelay).requeueOverdue();
    await until(() => hits(ids[2]) === 2, { what: 'the overdue callback sent again' });
    await until(async () => (await status(ids[2])) === 'delivered', { what: 'delivered again' });
  });
});
