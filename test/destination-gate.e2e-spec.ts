// The destination gate's rules on a real Redis: a freed slot handed to a callback waiting in the
// worker, and a healthy destination's parked callbacks resumed without slots, at most cap at a time.
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../src/config/app-config.js';
import { createRedis, deletePrefixKeys, redisNamespace, withRedisOnce } from '../src/database/redis.js';
import { creditLease, creditOf, DestinationGate } from '../src/delivery/destination-gate.js';
import { runIdentity, until } from './support/test-app.js';

const LEASE = 60_000;
const origin = 'http://127.0.0.1:9';

describe('destination gate', () => {
  const { queuePrefix } = runIdentity();
  const config = loadConfig({
    ...process.env,
    QUEUE_PREFIX: queuePrefix,
    CALLBACK_DESTINATION_CONCURRENCY: '2',
    CALLBACK_BREAKER_THRESHOLD: '2',
  });
  const gate = new DestinationGate(config);
  const redis = createRedis(config.redisUrl, `${queuePrefix}-gate-test`);
  const key = (k: string) => `${redisNamespace(queuePrefix)}:dst:${k}`;
  const leases = () => redis.zrange(key(`l:${origin}`), 0, -1);
  const ids = (n: number) => Array.from({ length: n }, () => randomUUID());
  const start = async (...cbs: string[]) => (await gate.admit('start', cbs.map((id) => ({ origin, id })), LEASE)).map((a) => a.admission);
  const settle = (id: string, result: 'ok' | 'fail' | 'none', next?: string) =>
    gate.settle([{ origin, id, result, error: result === 'fail' ? 'HTTP 500' : null, next: next ? { id: next, uncounted: false } : undefined }], LEASE);

  // The gate's connection fails fast rather than queueing commands: wait until it is up.
  beforeAll(() => until(() => gate.openCount().then(() => true, () => false), { what: "the gate's Redis connection" }));
  afterEach(() => withRedisOnce(config.redisUrl, (r) => deletePrefixKeys(r, queuePrefix)));
  afterAll(() => {
    gate.onModuleDestroy();
    redis.disconnect();
  });

  it('hands a freed slot to the next callback, never beyond the cap', async () => {
    const [a, b, c, d] = ids(4);
    expect(await start(a, b, c)).toEqual(['ok', 'ok', 'full']);
    const [s] = await settle(a, 'ok', c);
    expect(s.handed).toBe(true);
    expect((await leases()).sort()).toEqual([b, c].sort());
    // C now holds the slot: starting it keeps it, D still finds none.
    expect(await start(c, d)).toEqual(['ok', 'full']);
    // A settlement that frees nothing (D held no slot) hands nothing: both slots are still taken.
    expect((await settle(d, 'none', a))[0].handed).toBe(false);
    expect((await leases()).sort()).toEqual([b, c].sort());
  });

  it('hands nothing once failures open the circuit', async () => {
    const [a, b, c, d] = ids(4);
    expect(await start(a, b)).toEqual(['ok', 'ok']);
    expect((await settle(a, 'fail', c))[0].handed).toBe(true);
    const [s] = await settle(b, 'fail', d);
    expect(s.transition).toBe('opened');
    expect(s.handed).toBe(false);
    expect(await leases()).toEqual([c]);
  });

  it("queues a healthy destination's resumed callbacks without slots, as many as its cap at a time", async () => {
    const [a, b, c, d] = ids(4);
    expect(await start(a)).toEqual(['ok']);
    // Not known healthy yet: a resumed callback goes with a slot reserved for it.
    expect((await gate.admit('hand-off', [{ origin, id: b }], LEASE)).map((x) => x.admission)).toEqual(['ok']);
    const [healthy] = await settle(a, 'ok');
    expect(healthy.free).toBe(2);
    await settle(b, 'none');
    const resumed = await gate.admit('hand-off', [c, d].map((id) => ({ origin, id })), LEASE);
    expect(resumed).toEqual([
      { admission: 'queued', priority: 0, waiting: 0, healthy: true },
      { admission: 'queued', priority: 0, waiting: 0, healthy: true },
    ]);
    expect(await leases()).toEqual([]);
    const [snapshot] = await gate.snapshot([origin]);
    expect(snapshot.room).toBe(0);
    // One of them starts: its place among the resumed is free again.
    expect(await start(c)).toEqual(['ok']);
    expect((await gate.snapshot([origin]))[0].room).toBe(1);
    expect((await settle(c, 'ok'))[0].free).toBe(1);
  });

  it("queues a new destination's first 2,000 fresh callbacks without slots, until a failure or its first 2xx", async () => {
    const queue = async (n: number) => (await gate.admit('queue', ids(n).map((id) => ({ origin, id })), LEASE)).map((a) => a.admission);
    const count = (answers: string[]) => answers.reduce<Record<string, number>>((c, a) => ({ ...c, [a]: (c[a] ?? 0) + 1 }), {});
    // Never met: trusted as if healthy, without a slot, up to 2,000 (here in two calls); then a slot
    // each while the cap allows (2 here), and the rest park.
    expect(count(await queue(1500))).toEqual({ queued: 1500 });
    expect(count(await queue(503))).toEqual({ queued: 500, ok: 2, full: 1 });
    expect(await leases()).toHaveLength(2);
    // A start on a destination not yet answering 2xx says so: its worker parks a callback that
    // finds no slot instead of waiting for one.
    const [starting] = await gate.admit('start', ids(1).map((id) => ({ origin, id })), LEASE);
    expect(starting).toMatchObject({ admission: 'full', healthy: false });
    // Its first 2xx makes it healthy (and forgets the count): fresh callbacks go without slots again.
    const [holder] = await leases();
    expect((await settle(holder, 'ok'))[0].state).toBe('closed');
    expect(count(await queue(3))).toEqual({ queued: 3 });
    expect((await gate.admit('start', ids(1).map((id) => ({ origin, id })), LEASE))[0]).toMatchObject({ admission: 'ok', healthy: true });
    // A failure on record: no longer trusted, each fresh callback needs a slot (the failed one's is free).
    const [a] = ids(1);
    await settle((await leases())[0], 'fail');
    expect(count(await queue(2))).toEqual({ ok: 1, full: 1 });
    expect((await gate.admit('start', [{ origin, id: a }], LEASE))[0]).toMatchObject({ admission: 'full', healthy: false });
  });

  it('keeps to the rules when one call holds many callbacks of the destination', async () => {
    const [a, b, c, d, e, f, g] = ids(7);
    // Slots counted through the call: two of three start.
    expect(await start(a, b, e)).toEqual(['ok', 'ok', 'full']);
    // Three settlements in one call, each handing a slot on: the two that free one hand it, the
    // third (E held none) finds the cap reached.
    const three = await gate.settle(
      [a, b, e].map((id, i) => ({ origin, id, result: i < 2 ? ('ok' as const) : ('none' as const), error: null, next: { id: [c, d, f][i], uncounted: false } })),
      LEASE,
    );
    expect(three.map((x) => x.handed)).toEqual([true, true, false]);
    // Room is reported once, by the last: healthy now, both places among the resumed are free.
    expect(three.map((x) => x.free)).toEqual([0, 0, 2]);
    expect((await leases()).sort()).toEqual([c, d].sort());
    // A failure noted after a 2xx, then a 2xx again: the count and the error are cleared.
    await settle(c, 'fail');
    expect((await gate.snapshot([origin]))[0]).toMatchObject({ consecutiveFailures: 1, lastError: 'HTTP 500' });
    await settle(d, 'ok');
    expect((await gate.snapshot([origin]))[0]).toMatchObject({ state: 'closed', consecutiveFailures: 0, lastError: null });
    // Healthy: five queued in one call take priorities step by step; three of them start in one call.
    const five = ids(5);
    const queued = await gate.admit('queue', five.map((id) => ({ origin, id })), LEASE);
    expect(queued.map((x) => x.priority)).toEqual([0, 0, 1, 1, 2]);
    expect(await start(...five.slice(0, 3))).toEqual(['ok', 'ok', 'full']);
    const [next] = await gate.admit('queue', [{ origin, id: g }], LEASE);
    expect(next.priority).toBe(1);
    // Two failures in one call open the circuit with the second (threshold 2).
    const failing = await gate.settle(
      five.slice(0, 2).map((id) => ({ origin, id, result: 'fail' as const, error: 'HTTP 503' })),
      LEASE,
    );
    expect(failing.map((x) => x.transition)).toEqual([null, 'opened']);
    expect(failing.map((x) => x.free)).toEqual([0, 0]);
    expect(await leases()).toEqual([]);
  });

  it("takes a worker's credits: a lease named apart from its callback, bulk reports of 2xx (stale ones ignored), renewals", async () => {
    const [a, b, c, d] = ids(4);
    const partner = randomUUID();
    const credit = (n: number) => creditLease(partner, `w.${n}`);
    const score = (lease: string) => redis.zscore(key(`l:${origin}`), lease);
    // Healthy, with two fresh callbacks queued: a start on a credit holds the credit's lease and
    // counts the callback started (the next queued one takes priority 0 again).
    await start(a);
    await settle(a, 'ok');
    await gate.admit('queue', [b, c].map((id) => ({ origin, id })), LEASE);
    const [taken] = await gate.admit('start', [{ origin, id: b, lease: credit(1) }], LEASE);
    expect(taken).toMatchObject({ admission: 'ok', waiting: 0 });
    expect(await leases()).toEqual([credit(1)]);
    expect(creditOf(credit(1))).toBe(partner);
    expect(creditOf(b)).toBeNull();
    // A renewal extends a held lease and tells a lost one.
    const before = Number(await score(credit(1)));
    await until(() => Date.now() > before - LEASE + 5, { what: 'a later clock' });
    const [held, lost] = await gate.settle(
      [
        { origin, id: credit(1), result: 'renew', error: null },
        { origin, id: credit(2), result: 'renew', error: null },
      ],
      LEASE,
    );
    expect([held.handed, lost.handed]).toEqual([true, false]);
    expect(Number(await score(credit(1)))).toBeGreaterThan(before);
    expect(await score(credit(2))).toBeNull();
    // C started on the reused credit: the report lowers the queued count by one, frees no lease.
    const [report] = await gate.settle([{ origin, id: '', result: 'report', error: null, at: Date.now(), started: 1 }], LEASE);
    expect(report).toMatchObject({ state: 'closed', transition: null });
    expect(await redis.hget(key('queued'), origin)).toBeNull();
    expect(await leases()).toEqual([credit(1)]);
    // A failure answered now opens the circuit with the second; a 2xx answered before it and
    // reported later is stale and changes nothing; one answered after it closes the circuit.
    const [s1, s2] = await gate.settle(
      [
        { origin, id: credit(1), result: 'fail', error: 'HTTP 503' },
        { origin, id: d, result: 'fail', error: 'HTTP 503' },
      ],
      LEASE,
    );
    expect([s1.transition, s2.transition, s2.state]).toEqual([null, 'opened', 'open']);
    const failedAt = Date.now();
    const [stale] = await gate.settle([{ origin, id: '', result: 'report', error: null, at: failedAt - 5000 }], LEASE);
    expect(stale).toMatchObject({ state: 'open', transition: null });
    expect((await gate.snapshot([origin]))[0]).toMatchObject({ state: 'open', consecutiveFailures: 2 });
    const [fresh] = await gate.settle([{ origin, id: '', result: 'report', error: null, at: failedAt + 1 }], LEASE);
    expect(fresh).toMatchObject({ state: 'closed', transition: 'closed' });
    expect((await gate.snapshot([origin]))[0]).toMatchObject({ state: 'closed', consecutiveFailures: 0, lastError: null, inFlight: 0 });
  });
});
