import { Admission } from '../src/delivery/admission.js';
import { AdmissionSignal } from '../src/platform/database/admission-signal.js';
import { CallbackQueue } from '../src/delivery/callback-queue.js';
import { ADMISSION_INTERVAL, CallbackRelay } from '../src/delivery/callback-relay.js';
import { relayClient, RELAY_TIMEOUT_MS } from '../src/delivery/relay-connection.js';
import { sessionWithDeadline, SqlSession } from '../src/platform/database/sql-session.js';
import { TransactionRunner } from '../src/platform/database/transaction-runner.js';
import { storeStatement } from '../src/callbacks/store/statements.js';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { CallbackRecorder } from '../src/callbacks/callback-recorder.js';
import { CallbackMessage } from '../src/callbacks/callback-message.js';
import { DeliveryWorker } from '../src/delivery/delivery-worker.js';
import { Receiver } from './support/receiver.js';
import { companyWithCallback, harness, Partner, TestApp, until } from './support/harness.js';

/** How admission learns of new rows, with its 1-second timer stopped so only the wake-ups count. */
describe('relay wake-ups', () => {
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;

  // The timer once an hour: only the wake-ups admit (the relay leads from its start).
  const e2e = harness({}, { configure: (b) => b.overrideProvider(ADMISSION_INTERVAL).useValue(3_600_000) });
  beforeAll(async () => {
    ({ t, p, rx } = e2e);
    await until(() => t.app.get(CallbackRelay).isLeader, { what: 'this process leads admission' });
  });

  it('admits the callbacks of a change right after its commit', async () => {
    const { change, statuses } = await companyWithCallback(t, p, rx.url('/commit'));
    for (let i = 0; i < 3; i++) await change();
    await until(async () => (await statuses()).every((s) => s === 'delivered'), {
      what: 'delivered without the timer',
    });
    expect(rx.on('/commit')).toHaveLength(3);
  });

  it('admits the callbacks of a domain transaction (a limit request approved) right after its commit', async () => {
    const { c, statuses } = await companyWithCallback(t, p, rx.url('/company'));
    const l = (
      await t
        .as(p.apiKey, 'post', `/v1/companies/${c}/limit-requests`, { amount: '100', status_callback: rx.url('/limit') })
        .expect(201)
    ).body.id;
    await t.admin('post', `/admin/v1/limit-requests/${l}/approve`).expect(200);
    // 3 (the request approved), 0 (limit and status) and 2 (the balance), all in one transaction.
    await until(async () => (await statuses()).join() === 'delivered,delivered,delivered', {
      what: "the approval's callbacks delivered without the timer",
    });
    expect(rx.on('/limit')).toHaveLength(1);
  });

  it('admits rows written outside the domain on NOTIFY funding_callbacks', async () => {
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

  it('wakes admission once a domain transaction that recorded callbacks has committed, never for one rolled back', async () => {
    const { c } = await companyWithCallback(t, p, rx.url('/unused'));
    const recorder = t.app.get(CallbackRecorder);
    const writes = t.app.get(TransactionRunner);
    const signal = t.app.get(AdmissionSignal);
    const event = {
      message: CallbackMessage.CreditLimitUpdated,
      url: rx.url('/hook'),
      partnerId: p.id,
      ids: { companyId: c, withdrawalId: null, limitRequestId: null, loanId: null },
    };
    // What the database shows other sessions at each wake-up: the rows must be committed by then.
    const seen: Promise<number>[] = [];
    const wake = jest.spyOn(signal, 'wake').mockImplementation(() => {
      seen.push(
        t
          .sql<{ n: number }>(`SELECT count(*)::int AS n FROM callbacks WHERE url = $1`, [rx.url('/hook')])
          .then(([r]) => r.n),
      );
    });
    try {
      await expect(
        writes.transaction(async (m) => {
          await recorder.record(m, [event]);
          throw new Error('the change is refused after its callbacks were recorded');
        }),
      ).rejects.toThrow('refused');
      expect(wake).not.toHaveBeenCalled();
      await writes.transaction(async (m) => recorder.record(m, [event, event]));
      expect(wake).toHaveBeenCalledTimes(1);
      expect(await Promise.all(seen)).toEqual([2]);
      // Outside a transaction of the one write path there is no commit to wait for: refused.
      await expect(recorder.record(t.app.get(DataSource).manager, [event])).rejects.toThrow(
        'TransactionRunner.transaction',
      );
    } finally {
      wake.mockRestore();
      await t.sql(`UPDATE callbacks SET status = 'delivered' WHERE url = $1`, [rx.url('/hook')]);
    }
  });

  it('reconnects when its connection is ended under it, stands by, leads again and admits', async () => {
    const relay = t.app.get(CallbackRelay);
    const states: string[] = [];
    const enter = relay['enter'].bind(relay);
    const spy = jest.spyOn(relay as unknown as { enter: (s: string) => void }, 'enter').mockImplementation((s) => {
      states.push(s);
      enter(s as never);
    });
    try {
      // This database's leader only: advisory locks are per database, and pg_locks lists every database's (a bench's or another test run's).
      await t.sql(
        `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objid = 727003 AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      );
      await until(() => states.includes('reconnecting'), { what: 'the relay reconnecting' });
      // Its timer is stopped here: a wake-up does not reconnect, the tick does.
      relay['tickAt'] = 0;
      relay.wake();
      await until(() => relay.isLeader, { what: 'leading again' });
      expect(states).toEqual(['reconnecting', 'standing-by', 'leading']);
      const { change, statuses } = await companyWithCallback(t, p, rx.url('/after-reconnect'));
      await change();
      await until(async () => (await statuses()).join() === 'delivered', { what: 'delivered after the reconnect' });
    } finally {
      spy.mockRestore();
    }
  });

  it('spaces passes apart under a stream of wake-ups, and runs one after the last of them', async () => {
    const admission = t.app.get(Admission);
    const admit = admission.admit.bind(admission);
    const passes: { start: number }[] = [];
    // The real pass; when each started.
    const timed = jest.spyOn(admission, 'admit').mockImplementation(async (conn) => {
      passes.push({ start: performance.now() });
      return admit(conn);
    });
    try {
      const signal = t.app.get(AdmissionSignal);
      let lastWake = 0;
      for (let i = 0; i < 40; i++) {
        lastWake = performance.now(); // before: the pass it starts may begin inside wake()
        signal.wake();
        await new Promise((r) => setTimeout(r, 1));
      }
      await until(() => passes.some((p) => p.start >= lastWake), { what: 'a pass after the last wake-up' });
      // Starting 5 ms apart (PASS_SPACING_MS); timers fire on whole milliseconds, so a little less is measured.
      const gaps = passes.slice(1).map((p, i) => p.start - passes[i].start);
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(3);
      expect(passes.length).toBeLessThan(40);
    } finally {
      timed.mockRestore();
    }
  });
});

/** Whatever stopped before, the timer's pass finds what is due: nothing waits for an event that may not come. */
describe('admission on its timer', () => {
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;

  const e2e = harness();
  beforeAll(() => ({ t, p, rx } = e2e));

  it('returns a callback whose lease ran out (its worker died) and delivers it, spending no attempt', async () => {
    const { c } = await companyWithCallback(t, p, rx.url('/unused'));
    const [row] = await t.sql<{ id: string }>(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at, lease_until)
       VALUES ($1, $2, 0, $3, '{}', 'sending', now(), now() - interval '1 second') RETURNING id`,
      [p.id, c, rx.url('/lapsed')],
    );
    const done = await until(
      async () =>
        (
          await t.sql<{ status: string; attempt_count: number }>(
            'SELECT status, attempt_count FROM callbacks WHERE id = $1',
            [row.id],
          )
        ).find((r) => r.status === 'delivered' || r.status === 'failed'),
      { timeoutMs: 5000, what: 'settled after its lease lapsed' },
    );
    expect(done).toEqual({ status: 'delivered', attempt_count: 1 });
    expect(rx.on('/lapsed')).toHaveLength(1);
  });

  it("admits a callback due below its destination's floor (a long transaction's, a bulk load's) on the pass after the timer's sweep", async () => {
    const { c, change, statuses } = await companyWithCallback(t, p, rx.url('/floor'));
    await change();
    await until(async () => (await statuses()).every((s) => s === 'delivered'), {
      what: 'the first callback delivered',
    });
    // Passes since have started this destination's due callbacks at least 10 s before their time.
    const [row] = await t.sql<{ id: string }>(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
       VALUES ($1, $2, 0, $3, '{}', 'pending', now() - interval '1 hour') RETURNING id`,
      [p.id, c, rx.url('/floor')],
    );
    await t.sql(`SELECT pg_notify('funding_callbacks', '')`);
    await until(() => rx.on('/floor').some((h) => h.headers['webhook-id'] === row.id), {
      timeoutMs: 5000,
      what: 'delivered by the pass after the sweep',
    });
  });

  // The sweep runs beside the passes: one that waits (here on a row lock, in production on a slow
  // LAPSE) holds no callback back. On the relay's own connection, the pass after it waited too.
  it('admits while the sweep waits on its own connection, and the lapsed callback it waited for once it ends', async () => {
    const { c, change } = await companyWithCallback(t, p, rx.url('/beside'));
    const [row] = await t.sql<{ id: string }>(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at, lease_until)
       VALUES ($1, $2, 0, $3, '{}', 'sending', now(), now() + interval '1 second') RETURNING id`,
      [p.id, c, rx.url('/beside-lapsed')],
    );
    const holder = new Client({ connectionString: t.config.databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      const [{ pid }] = (
        await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid FROM callbacks WHERE id = $1 FOR UPDATE', [
          row.id,
        ])
      ).rows;
      // Its lease runs out: the next sweep's LAPSE waits for the lock.
      await until(
        async () =>
          (await t.sql('SELECT 1 FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))', [pid])).length > 0,
        { timeoutMs: 5000, what: 'the sweep waiting' },
      );
      const fresh = await change();
      await until(() => rx.on('/beside').some((h) => h.headers['webhook-id'] === fresh), {
        timeoutMs: 3000,
        what: 'the fresh callback delivered while the sweep waits',
      });
      expect(rx.on('/beside-lapsed')).toHaveLength(0);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    await until(() => rx.on('/beside-lapsed').length === 1, {
      timeoutMs: 5000,
      what: 'the lapsed callback delivered after the sweep',
    });
  });

  it("makes the sweep's connection again once it is lost: a lease that runs out after is still returned", async () => {
    const SWEEP = ['admission-lapse', 'admission-open', 'admission-expire', 'admission-flush-notices'].map(
      (name) => storeStatement(name).text,
    );
    // The sweep's backend: the one whose last statement is one of the sweep's (pg_stat_activity may cut a long text short).
    const sweepers = async () =>
      (
        await t.sql<{ pid: number; query: string }>(
          'SELECT pid, query FROM pg_stat_activity WHERE datname = current_database()',
        )
      )
        .filter((b) => b.query.length > 0 && SWEEP.some((s) => s.startsWith(b.query)))
        .map((b) => b.pid);
    const [before] = await until(async () => ((await sweepers()).length === 1 ? await sweepers() : undefined), {
      timeoutMs: 5000,
      what: "the sweep's connection",
    });
    await t.sql('SELECT pg_terminate_backend($1)', [before]);
    const { c } = await companyWithCallback(t, p, rx.url('/unused'));
    const [row] = await t.sql<{ id: string }>(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at, lease_until)
       VALUES ($1, $2, 0, $3, '{}', 'sending', now(), now() - interval '1 second') RETURNING id`,
      [p.id, c, rx.url('/after-loss')],
    );
    await until(() => rx.on('/after-loss').some((h) => h.headers['webhook-id'] === row.id), {
      timeoutMs: 5000,
      what: 'the lapsed callback delivered',
    });
    expect(await sweepers()).not.toContain(before);
  });

  // A partitioned leader's session would hold the admission lock until PostgreSQL noticed; the
  // relay asks for that within seconds. (The client's own half, a statement past its timeout, is
  // tested under flow in delivery-restarts.e2e-spec.ts.)
  it("asks PostgreSQL to end the relay's session once the relay is unreachable", async () => {
    const client = relayClient(t.config.databaseUrl);
    try {
      await client.connect();
      const { rows } = await client.query(
        `SELECT current_setting('tcp_keepalives_idle') AS idle, current_setting('tcp_keepalives_interval') AS interval,
                current_setting('tcp_keepalives_count') AS count, current_setting('tcp_user_timeout') AS user_timeout`,
      );
      expect(rows[0]).toEqual({ idle: '10', interval: '5', count: '3', user_timeout: '20000' });
    } finally {
      await client.end();
    }
  });

  it('admits nothing while no worker announces slots, and everything once one does', async () => {
    const { change, statuses } = await companyWithCallback(t, p, rx.url('/no-worker'));
    const registry = t.app.get(DeliveryWorker)['registry'];
    await registry.leave();
    await change();
    // A pass now (as the timer's would be) finds no slots: the callback stays pending.
    expect(await t.app.get(Admission).admit(t.app.get(CallbackRelay)['session']!)).toBe(0);
    expect(await statuses()).toEqual(['pending']);
    registry.join();
    await until(async () => (await statuses()).join() === 'delivered', {
      timeoutMs: 5000,
      what: 'delivered once the worker announces its slots',
    });
  });
});

/** A pass admits in rounds (admission-plan.ts); each round's jobs go to Redis as it ends. */
describe('admission rounds', () => {
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;
  let other: Receiver;

  // 10 slots: a first round cannot give a destination with 30 due all of its room, so a second follows.
  const e2e = harness(
    { CALLBACK_CONCURRENCY: '10' },
    { configure: (b) => b.overrideProvider(ADMISSION_INTERVAL).useValue(3_600_000) },
  );
  beforeAll(async () => {
    ({ t, p, rx } = e2e);
    other = await Receiver.start();
    await until(() => t.app.get(CallbackRelay).isLeader, { what: 'this process leads admission' });
  });
  afterAll(() => other.close());

  it("puts a round's jobs in Redis before the next round's statement: a fresh callback waits for no later round", async () => {
    const { c } = await companyWithCallback(t, p, rx.url('/unused'));
    const idle = async () =>
      (await t.sql(`SELECT 1 FROM callbacks WHERE status IN ('pending', 'sending')`)).length === 0;
    await until(idle, { what: 'nothing waiting or in flight' });
    // Written without NOTIFY (and the timer stopped): only the pass below admits them.
    const insert = (url: string, n: number) =>
      t.sql<{ id: string }>(
        `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at) SELECT $1, $2, 0, $3, '{}', 'pending', now() FROM generate_series(1, $4) RETURNING id`,
        [p.id, c, url, n],
      );
    const [fresh] = await insert(rx.url('/fresh'), 1);
    await insert(other.url('/busy'), 30);
    // Both proven, with room for 40 each: more than the 10 slots.
    await t.sql(`UPDATE destinations SET window_size = 40, failures = 0, last_ok_at = now() WHERE partner_id = $1`, [
      p.id,
    ]);
    const events: string[] = [];
    const queue = t.app.get(CallbackQueue);
    const add = queue.add.bind(queue);
    const spy = jest.spyOn(queue, 'add').mockImplementation((ids, lease, workers) => {
      events.push(ids.includes(fresh.id) ? 'jobs of the fresh callback' : 'jobs');
      return add(ids, lease, workers);
    });
    const ADMIT = storeStatement('admission-admit').text;
    const client = relayClient(t.config.databaseUrl);
    try {
      await client.connect();
      const session = sessionWithDeadline(client, RELAY_TIMEOUT_MS);
      const recorded: SqlSession = {
        query: (q) => {
          if (q.text === ADMIT) events.push('ADMIT');
          return session.query(q);
        },
      };
      expect(await t.app.get(Admission).admit(recorded)).toBe(6);
    } finally {
      spy.mockRestore();
      await client.end();
    }
    // Round 1: the fresh one and 3 of the busy one (the slots left free bound it); round 2: 2 more.
    expect(events).toEqual(['ADMIT', 'jobs of the fresh callback', 'ADMIT', 'jobs']);
    await until(() => rx.on('/fresh').length === 1, { what: 'the fresh callback delivered' });
  });
});

/** A job carries several callbacks and their lease: it sends only what is still its own. */
describe('jobs and leases', () => {
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;

  const e2e = harness();
  beforeAll(() => ({ t, p, rx } = e2e));

  /** A callback row to `path` in `status`, its lease `lease` from now (SQL interval), and its lease as a job carries it. */
  async function row(companyId: string, path: string, status: string, lease: string | null) {
    const [r] = await t.sql<{ id: string; lease: string | null }>(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at, lease_until)
       VALUES ($1, $2, 0, $3, '{}', $4, now(), now() + $5::interval)
       RETURNING id, (extract(epoch FROM lease_until) * 1000000)::bigint::text AS lease`,
      [p.id, companyId, rx.url(path), status, lease],
    );
    return r;
  }

  it('sends only the callbacks still sending under its lease', async () => {
    const { c } = await companyWithCallback(t, p, rx.url('/unused'));
    const own = await row(c, '/own', 'sending', '30 seconds');
    // Admitted again since (its lease lapsed and a later pass gave it a new one).
    const readmitted = await row(c, '/readmitted', 'sending', '31 seconds');
    const delivered = await row(c, '/delivered', 'delivered', null);
    try {
      await t.app.get(CallbackQueue).add([own.id, readmitted.id, delivered.id], own.lease!, 1);
      await until(
        async () =>
          (await t.sql('SELECT 1 FROM callbacks WHERE id = $1 AND status = $2', [own.id, 'delivered'])).length === 1,
        {
          what: 'the job delivered its own callback',
        },
      );
      await until(async () => (await t.app.get(CallbackQueue).queue.getJobCounts('wait', 'active')).active === 0, {
        what: 'the job ended',
      });
      expect(rx.on('/own')).toHaveLength(1);
      expect(rx.on('/readmitted')).toHaveLength(0);
      expect(rx.on('/delivered')).toHaveLength(0);
      expect(await t.sql('SELECT status, attempt_count FROM callbacks WHERE id = $1', [readmitted.id])).toEqual([
        { status: 'sending', attempt_count: 0 },
      ]);
    } finally {
      // Its destination's window is this receiver's: the other tests need the slot back.
      await t.sql(`UPDATE callbacks SET status = 'delivered', lease_until = NULL WHERE id = $1`, [readmitted.id]);
    }
  });

  it('drops a job of an earlier build (one callback id, no lease); its callback is sent once its lease lapses', async () => {
    const { c } = await companyWithCallback(t, p, rx.url('/unused'));
    const old = await row(c, '/earlier-build', 'sending', '2 seconds');
    const [{ lease_ms }] = await t.sql<{ lease_ms: number }>(
      `SELECT (extract(epoch FROM lease_until) * 1000)::float8 AS lease_ms FROM callbacks WHERE id = $1`,
      [old.id],
    );
    await t.app.get(CallbackQueue).queue.add('earlier build', { callbackId: old.id } as never, {
      jobId: old.id,
      removeOnComplete: true,
      removeOnFail: true,
    });
    await until(() => rx.on('/earlier-build').length === 1, { timeoutMs: 10_000, what: 'sent after its lease lapsed' });
    expect(rx.on('/earlier-build')[0].at).toBeGreaterThanOrEqual(lease_ms);
  });

  it('does not send a callback whose lease has too little left for an attempt; it is sent once the lease lapses', async () => {
    const { c } = await companyWithCallback(t, p, rx.url('/unused'));
    // 2 s left, less than the attempt's CALLBACK_TIMEOUT_MS (as if it had waited long for a slot).
    const short = await row(c, '/short-lease', 'sending', '2 seconds');
    const [{ lease_ms }] = await t.sql<{ lease_ms: number }>(
      `SELECT (extract(epoch FROM lease_until) * 1000)::float8 AS lease_ms FROM callbacks WHERE id = $1`,
      [short.id],
    );
    await t.app.get(CallbackQueue).add([short.id], short.lease!, 1);
    await until(() => rx.on('/short-lease').length === 1, { timeoutMs: 10_000, what: 'sent after its lease lapsed' });
    expect(rx.on('/short-lease')[0].at).toBeGreaterThanOrEqual(lease_ms);
    await until(
      async () =>
        (await t.sql<{ status: string }>('SELECT status FROM callbacks WHERE id = $1', [short.id]))[0].status ===
        'delivered',
      { what: 'delivered' },
    );
    expect(await t.sql('SELECT attempt_count FROM callbacks WHERE id = $1', [short.id])).toEqual([
      { attempt_count: 1 },
    ]);
  });
});
