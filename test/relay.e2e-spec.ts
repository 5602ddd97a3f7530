import { CallbackRelay } from '../src/delivery/callback-relay.js';
import { Receiver } from './support/receiver.js';
import { companyWithCallback, createPartner, Partner, startTestApp, TestApp, until } from './support/test-app.js';

/** How the relay learns of new rows, with its 5-second sweep stopped so only the wake-ups count. */
describe('relay wake-ups', () => {
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;

  beforeAll(async () => {
    rx = await Receiver.start();
    t = await startTestApp();
    p = await createPartner(t);
    t.app.get(CallbackRelay)['timers'].forEach(clearInterval);
  });
  afterAll(async () => {
    await t?.close();
    await rx?.close();
  });

  it('relays the callbacks of a change right after its commit', async () => {
    const { change, statuses } = await companyWithCallback(t, p, rx.url('/commit'));
    for (let i = 0; i < 3; i++) await change();
    await until(async () => (await statuses()).every((s) => s === 'delivered'), { what: 'delivered without a sweep' });
    expect(rx.on('/commit')).toHaveLength(3);
  });

  it('relays rows written outside the domain on NOTIFY funding_callbacks', async () => {
    const { c } = await companyWithCallback(t, p, rx.url('/unused'));
    const [row] = await t.sql<{ id: string }>(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
       VALUES ($1, $2, 0, $3, '{}', 'pending', now()) RETURNING id`,
      [p.id, c, rx.url('/notified')],
    );
    await t.sql(`SELECT pg_notify('funding_callbacks', '')`);
    await until(() => rx.on('/notified').length === 1, { what: 'delivered on NOTIFY' });
    expect(rx.on('/notified')[0].headers['webhook-id']).toBe(row.id);
  });
});
