/**
 * The delivery core's statements themselves, driven through random histories on PostgreSQL: the
 * real admission pass (CANDIDATES, ADMIT), sweep (LAPSE, EXPIRE), record (settlement's RECORD
 * and destination writes), the recorder's INSERT and the operators' redelivery, imported from the
 * code, on a scratch database. Time passes by moving every stored time back (PostgreSQL's clock
 * cannot be moved). Fewer runs than test/delivery-model.spec.ts, which checks the same
 * invariants on a model hundreds of times a second. FC_SEED=<seed> replays a failure.
 */
import fc from 'fast-check';
import { CallbackMessage } from '../src/callbacks/callback-message.js';
import { callbackRows } from '../src/callbacks/store/recording.js';
import { AuditLog } from '../src/audit/audit-log.js';
import { Redelivery } from '../src/callbacks/redelivery.js';
import { Writes } from '../src/database/writes.js';
import { AppConfig, loadConfig } from '../src/config/app-config.js';
import { microsKey } from '../src/database/sql.js';
import type { SqlSession } from '../src/database/sql-session.js';
import { riskySlots } from '../src/delivery/admission-plan.js';
import { Admission, LEASE_MARGIN_MS } from '../src/delivery/admission.js';
import { CallbackQueue, jobsOf } from '../src/delivery/callback-queue.js';
import { DESTINATION_COLUMNS, DestinationRow } from '../src/callbacks/store/destination-states.js';
import { stateOf } from '../src/delivery/destination-store.js';
import { INITIAL_WINDOW, isProven, PROVEN_FOR_MS } from '../src/delivery/destination-window.js';
import { Settlement } from '../src/delivery/settlement.js';
import type { SettlingRow } from '../src/delivery/settle-attempt.js';
import { followUrl } from '../src/callbacks/store/url-changes.js';
import { Metrics } from '../src/metrics/metrics.js';
import { answer, Behaviour, BEHAVIOURS } from './support/delivery-model.js';
import { scratchDatabase, ScratchDatabase, seedCompany } from './support/scratch-database.js';
import { ADMIN_TOKEN, TEST_REDIS_URL } from './support/test-app.js';

const ORIGINS = ['https://a.test', 'https://b.test', 'https://c.test'];
const SCHEDULE = [1000, 2000, 4000];
const SCHEDULE_TOTAL = SCHEDULE.reduce((a, b) => a + b, 0);
const MAX_ATTEMPTS = SCHEDULE.length + 1;
const TIMEOUT_MS = 5000;
const LEASE_MS = TIMEOUT_MS + LEASE_MARGIN_MS;
const WINDOW_MAX = 4;
const READY_WINDOW = 6;
const PROBE_LAST = 4000;

/** A destination's answer, as the model's (no Retry-After: this test's time moves by hand). */
const answerOf = (b: Behaviour) => answer(b, TIMEOUT_MS, null);

/** One callback of a job a worker holds: its id, the job's lease, and when (real clock) and at what shift it was sent. */
interface Entry {
  id: string;
  /** Its destination when admitted: where its request goes, whatever becomes of its row meanwhile. */
  dest: string;
  lease: string;
  worker: number;
  sentAt: number;
  shiftAtSend: number;
}

interface CallbackRow {
  id: string;
  destination: string;
  status: string;
  next_attempt_at: Date | null;
  lease_until: Date | null;
  delivered_at: Date | null;
  schedule_attempts: number;
  attempt_count: number;
  last_error: string | null;
  url_removed_at: Date | null;
}

class World {
  readonly behaviour = new Map<string, Behaviour>();
  readonly workers: { slots: number; up: boolean }[];
  entries: Entry[] = [];
  /** How far every stored time has been moved back so far (ms). */
  shift = 0;
  private settlement: Settlement;
  private readonly admission: Admission;
  private readonly admin: Redelivery;
  private readonly writes: Writes;
  private admitted: string[] = [];

  constructor(
    private readonly s: ScratchDatabase,
    private readonly config: AppConfig,
    private readonly metrics: Metrics,
    private readonly companies: { partnerId: string; companyId: string }[],
    destinations: number,
    workerSlots: number[],
  ) {
    for (const o of ORIGINS.slice(0, destinations)) this.behaviour.set(o, 'ok');
    this.workers = workerSlots.map((slots) => ({ slots, up: true }));
    const queue = { add: async (ids: string[], lease: string, workers: number) => this.take(jobsOf(ids, workers), lease, await this.destinationsOf(ids)) } as unknown as CallbackQueue;
    this.admission = new Admission(config, queue, metrics);
    this.settlement = this.newSettlement();
    this.writes = new Writes(s.db, { wake: () => undefined });
    this.admin = new Redelivery(this.writes, new AuditLog(s.db));
  }

  private newSettlement(): Settlement {
    return new Settlement(this.s.db, this.config, this.metrics, { wake: () => undefined } as never);
  }

  get origins(): string[] {
    return [...this.behaviour.keys()];
  }

  /** The live workers' rows, as WorkerRegistry announces them (an hour ahead: time moves only the callbacks' clocks). */
  async announce(): Promise<void> {
    await this.s.pool.query(`DELETE FROM delivery_workers`);
    for (const [i, w] of this.workers.entries()) {
      if (w.up) await this.s.pool.query(`INSERT INTO delivery_workers (id, concurrency, expires_at) VALUES ($1, $2, now() + interval '1 hour')`, [`w${i}`, w.slots]);
    }
  }

  async commit(origin: string, company = 0): Promise<void> {
    const c = this.companies[company % this.companies.length];
    const insert = callbackRows([{ message: CallbackMessage.CreditLimitUpdated, url: `${origin}/cb?token=t`, partnerId: c.partnerId, ids: { ...c, withdrawalId: null, limitRequestId: null, loanId: null } }]);
    await this.s.pool.query(insert.text, insert.values);
  }

  /** An open circuit at the origin whose probe is due now (as settlement leaves one). */
  async openCircuit(origin: string): Promise<void> {
    await this.s.pool.query(
      `INSERT INTO destinations (origin, window_size, failures, opened_at, next_probe_at, probe_ms, last_error, version)
       VALUES ($1, 1, 3, now() - interval '1 minute', now(), 1000, 'HTTP 503', 1)
       ON CONFLICT (origin) DO UPDATE SET window_size = 1, failures = 3, opened_at = now() - interval '1 minute', next_probe_at = now(), probe_ms = 1000, last_error = 'HTTP 503', version = destinations.version + 1`,
      [origin],
    );
  }

  /** The partner's PATCH of a company's URL (callbacks-of-url.ts): moved to another destination, or removed (null). */
  async moveUrl(company: number, origin: string | null): Promise<void> {
    const c = this.companies[company % this.companies.length];
    const of = { property: 'status_callback', companyId: c.companyId, messages: [CallbackMessage.CreditLimitUpdated], key: 'companyId' as const, resourceId: c.companyId };
    await this.writes.transaction((m) => followUrl(m, of, origin === null ? null : `${origin}/moved`));
  }

  private async destinationsOf(ids: string[]): Promise<Map<string, string>> {
    const { rows } = await this.s.pool.query<{ id: string; destination: string }>(`SELECT id, destination FROM callbacks WHERE id = ANY($1::uuid[])`, [ids]);
    return new Map(rows.map((r) => [r.id, r.destination]));
  }

  /** Admission's pass; returns the ids it admitted. */
  async pass(): Promise<string[]> {
    this.admitted = [];
    await this.admission.admit(this.s.pool as unknown as SqlSession);
    return this.admitted;
  }

  sweep = () => this.admission.sweep(this.s.pool as unknown as SqlSession);

  /** BullMQ hands each job to a live worker: here the one holding the fewest callbacks. */
  private take(jobs: string[][], lease: string, destinations: Map<string, string>): void {
    const live = this.workers.map((_, i) => i).filter((i) => this.workers[i].up);
    if (live.length === 0) throw new Error(`admitted ${jobs.flat().join()} with no live worker`);
    for (const ids of jobs) {
      const worker = [...live].sort((a, b) => this.entries.filter((e) => e.worker === a).length - this.entries.filter((e) => e.worker === b).length)[0];
      for (const id of ids) this.entries.push({ id, dest: destinations.get(id)!, lease, worker, sentAt: Date.now(), shiftAtSend: this.shift });
      this.admitted.push(...ids);
    }
  }

  /** A worker's delivery of one entry: loaded as callback-delivery.ts loads it, answered, and recorded. */
  async settle(e: Entry, b: Behaviour | null, lateMs = 0): Promise<void> {
    this.entries = this.entries.filter((x) => x !== e);
    const { rows } = await this.s.pool.query<SettlingRow & { status: string; lease: string | null }>(
      `SELECT id, destination, attempt_count, schedule_attempts, ${microsKey('schedule_started_at')} AS schedule_key, status, ${microsKey('lease_until')} AS lease FROM callbacks WHERE id = $1`,
      [e.id],
    );
    const row = rows[0];
    if (row.status !== 'sending' || row.lease !== e.lease) return; // not this job's any more: left alone
    const startedAt = e.sentAt - (this.shift - e.shiftAtSend);
    await this.settlement.settle({ row, startedAt, answeredAt: Math.min(Date.now(), startedAt + lateMs), result: answerOf(b ?? this.behaviour.get(row.destination)!) });
  }

  /** Time passes: every stored time moves back by `ms` (and every job's lease with it); requests in flight past their timeout answer first. */
  async tick(ms: number): Promise<void> {
    for (const e of [...this.entries]) if (Date.now() - e.sentAt + (this.shift - e.shiftAtSend) + ms >= TIMEOUT_MS) await this.settle(e, null);
    const back = `- $1 * interval '1 millisecond'`;
    await this.s.pool.query(
      `UPDATE callbacks SET next_attempt_at = next_attempt_at ${back}, lease_until = lease_until ${back}, schedule_started_at = schedule_started_at ${back},
              created_at = created_at ${back}, delivered_at = delivered_at ${back}`,
      [ms],
    );
    await this.s.pool.query(`UPDATE destinations SET opened_at = opened_at ${back}, next_probe_at = next_probe_at ${back}, last_ok_at = last_ok_at ${back}, version = version + 1`, [ms]);
    this.entries = this.entries.map((e) => ({ ...e, lease: String(BigInt(e.lease) - BigInt(ms) * 1000n) }));
    this.shift += ms;
    this.settlement = this.newSettlement(); // what it remembers of destinations is from before
  }

  async crash(i: number): Promise<void> {
    this.workers[i].up = false;
    this.entries = this.entries.filter((e) => e.worker !== i);
    await this.announce();
  }

  async restart(i: number): Promise<void> {
    this.workers[i].up = true;
    await this.announce();
  }

  /** The operator's redelivery, as the bootstrap operator (its audit entry is written with it). */
  redeliver = async (id: string) => {
    const [operator] = (await this.s.pool.query<{ id: string }>(`SELECT id FROM operators WHERE name = 'admin'`)).rows;
    await this.admin.redeliver(id, { actor: { operator: { id: operator.id, name: 'admin', role: 'admin' }, action: 'callback.redeliver' } });
  };

  /** The callbacks' leases, as microsKey writes them (and a job carries them). */
  async leases(ids: string[]): Promise<Map<string, string>> {
    const { rows } = await this.s.pool.query<{ id: string; lease: string }>(`SELECT id, ${microsKey('lease_until')} AS lease FROM callbacks WHERE id = ANY($1::uuid[])`, [ids]);
    return new Map(rows.map((r) => [r.id, r.lease]));
  }

  async callbacks(): Promise<CallbackRow[]> {
    return (await this.s.pool.query<CallbackRow>(`SELECT id, destination, status, next_attempt_at, lease_until, delivered_at, schedule_attempts, attempt_count, last_error, url_removed_at FROM callbacks ORDER BY seq`)).rows;
  }

  async destinations(): Promise<(DestinationRow & { now: number })[]> {
    return (await this.s.pool.query(`SELECT ${DESTINATION_COLUMNS}, (extract(epoch FROM now()) * 1000)::float8 AS now FROM destinations d`)).rows;
  }

  /** How long until anything is due: a retry, a probe, a lease lapsing; at most a second, at least a millisecond. */
  async untilNext(): Promise<number> {
    const { rows } = await this.s.pool.query<{ ms: number | null }>(
      `SELECT (extract(epoch FROM least((SELECT min(next_attempt_at) FROM callbacks WHERE status = 'pending' AND next_attempt_at > now()),
                                        (SELECT min(lease_until) FROM callbacks WHERE status = 'sending'),
                                        (SELECT min(next_probe_at) FROM destinations WHERE next_probe_at > now())) - now()) * 1000)::float8 AS ms`,
    );
    return Math.max(1, Math.min(1000, Math.ceil((rows[0].ms ?? 1000) + 1)));
  }
}

function check(ok: boolean, message: () => string): void {
  if (!ok) throw new Error(message());
}

/** What holds after every step, read from the tables. */
async function safety(w: World): Promise<void> {
  const rows = await w.callbacks();
  for (const c of rows) {
    const settled = c.next_attempt_at === null && c.lease_until === null;
    const ok = { pending: c.next_attempt_at !== null && c.lease_until === null, sending: c.lease_until !== null, delivered: settled && c.delivered_at !== null, failed: settled }[c.status];
    check(ok === true && c.schedule_attempts <= MAX_ATTEMPTS, () => `callback in an inconsistent state: ${JSON.stringify(c)}`);
    // A callback fails after attempts, after its destination's outage outlasted its schedule, or with its URL removed.
    const cause = /unavailable \(circuit open since .*attempt schedule ended while waiting|^callback URL removed by the partner/;
    check(c.status !== 'failed' || c.attempt_count > 0 || cause.test(c.last_error ?? ''), () => `failed with no cause: ${JSON.stringify(c)}`);
  }
  for (const o of w.origins) {
    const sending = rows.filter((c) => c.destination === o && c.status === 'sending').length;
    const requests = w.entries.filter((e) => e.dest === o).length;
    check(sending <= WINDOW_MAX && requests <= WINDOW_MAX, () => `${o}: ${sending} sending, ${requests} requests, at most ${WINDOW_MAX}`);
  }
  for (const e of w.entries) check(rows.some((c) => c.id === e.id), () => `a job holds ${e.id}, which is no callback`);
}

/** What a pass that admitted must leave: within the slots, the unproven share, each destination's room; each job with its callbacks' lease. */
async function afterPass(w: World, admitted: string[]): Promise<void> {
  if (admitted.length === 0) return;
  // A job whose lease is not its callback's leaves the callback alone (callback-delivery.ts): it would wait for its lease to lapse.
  const leases = await w.leases(admitted);
  for (const id of admitted) check(w.entries.filter((e) => e.id === id).at(-1)?.lease === leases.get(id), () => `callback ${id} admitted with lease ${leases.get(id)}, its job carries ${w.entries.filter((e) => e.id === id).at(-1)?.lease}`);
  const rows = await w.callbacks();
  const dests = await w.destinations();
  const slots = Math.min(READY_WINDOW, w.workers.reduce((n, x) => n + (x.up ? x.slots : 0), 0));
  const sending = (o: string) => rows.filter((c) => c.destination === o && c.status === 'sending').length;
  const total = w.origins.reduce((n, o) => n + sending(o), 0);
  check(total <= slots, () => `${total} sending after a pass, ${slots} slots`);
  const unproven = dests.filter((d) => !isProven(stateOf(d), d.now));
  const admittedTo = (o: string) => rows.filter((c) => c.destination === o && admitted.includes(c.id)).length;
  if (unproven.some((d) => admittedTo(d.origin) > 0)) {
    const n = unproven.reduce((k, d) => k + sending(d.origin), 0);
    check(n <= riskySlots(slots), () => `unproven destinations: ${n} sending after a pass, share ${riskySlots(slots)} of ${slots}`);
  }
  // The requests under way to each destination, whatever became of their rows (a URL moved).
  const requests = (o: string) => w.entries.filter((e) => e.dest === o).length;
  for (const d of dests.filter((x) => x.opened_at !== null && admittedTo(x.origin) > 0)) {
    check(admittedTo(d.origin) === 1 && sending(d.origin) === 1 && requests(d.origin) === 1, () => `open ${d.origin}: admitted ${admittedTo(d.origin)}, ${sending(d.origin)} sending, ${requests(d.origin)} requests`);
  }
  for (const d of dests.filter((x) => !isProven(stateOf(x), x.now) && admittedTo(x.origin) > 0)) {
    const window = Math.min(stateOf(d).window, INITIAL_WINDOW);
    check(requests(d.origin) <= window, () => `unproven ${d.origin}: ${requests(d.origin)} requests, window ${window}`);
  }
}

/** Every destination answers, workers are back: admission, settlements and time until nothing waits. */
async function drain(w: World): Promise<void> {
  for (const o of w.origins) w.behaviour.set(o, 'ok');
  for (const i of w.workers.keys()) w.workers[i].up = true;
  await w.announce();
  for (let round = 0; round < 300; round++) {
    const rows = await w.callbacks();
    if (!rows.some((c) => c.status === 'pending' || c.status === 'sending')) return;
    await w.sweep();
    await afterPass(w, await w.pass());
    for (const e of [...w.entries]) await w.settle(e, 'ok');
    await safety(w);
    if (w.entries.length === 0) await w.tick(await w.untilNext());
  }
  throw new Error(`still waiting after 300 rounds: ${JSON.stringify((await w.callbacks()).filter((c) => c.status === 'pending' || c.status === 'sending'))}`);
}

const k = <K extends string>(...ks: K[]) => fc.constantFrom(...ks);
const stepArb = fc.oneof(
  { weight: 4, arbitrary: fc.record({ k: k('commit'), d: fc.nat(2), c: fc.nat(1) }) },
  // A partner moves a company's URL to another destination, or removes it.
  { weight: 2, arbitrary: fc.record({ k: k('move', 'move', 'remove'), d: fc.nat(2), c: fc.nat(1) }) },
  { weight: 2, arbitrary: fc.record({ k: k('behave'), d: fc.nat(2), b: fc.constantFrom(...BEHAVIOURS) }) },
  { weight: 5, arbitrary: fc.record({ k: k('pass', 'pass', 'sweep') }) },
  { weight: 4, arbitrary: fc.record({ k: k('settle'), pick: fc.nat(), as: fc.option(fc.constantFrom<Behaviour>('ok', '5xx', '429', 'hang', '4xx'), { freq: 4 }), late: fc.nat(50) }) },
  { weight: 1, arbitrary: fc.record({ k: k('crash', 'restart'), w: fc.nat(1) }) },
  { weight: 3, arbitrary: fc.record({ k: k('tick'), ms: fc.oneof(fc.integer({ min: 100, max: 3000 }), fc.constantFrom(LEASE_MS + 1, SCHEDULE_TOTAL + 1, PROBE_LAST, PROVEN_FOR_MS)) }) },
  { weight: 1, arbitrary: fc.record({ k: k('redeliver'), pick: fc.nat() }) },
);
type Step = typeof stepArb extends fc.Arbitrary<infer T> ? T : never;

async function apply(w: World, s: Step): Promise<void> {
  const origin = (d: number) => w.origins[d % w.origins.length];
  if (s.k === 'commit') await w.commit(origin(s.d), s.c);
  if (s.k === 'move') await w.moveUrl(s.c, origin(s.d));
  if (s.k === 'remove') await w.moveUrl(s.c, null);
  if (s.k === 'behave') w.behaviour.set(origin(s.d), s.b);
  if (s.k === 'sweep') await w.sweep();
  if (s.k === 'pass') await afterPass(w, await w.pass());
  if (s.k === 'settle' && w.entries.length > 0) await w.settle(w.entries[s.pick % w.entries.length], s.as, s.late);
  if (s.k === 'crash') await w.crash(s.w % w.workers.length);
  if (s.k === 'restart') await w.restart(s.w % w.workers.length);
  if (s.k === 'tick') await w.tick(s.ms);
  if (s.k === 'redeliver') {
    const done = (await w.callbacks()).filter((c) => (c.status === 'delivered' || c.status === 'failed') && c.url_removed_at === null);
    if (done.length > 0) await w.redeliver(done[s.pick % done.length].id);
  }
}

describe('the delivery statements on PostgreSQL, through random histories', () => {
  let s: ScratchDatabase;
  let config: AppConfig;
  let metrics: Metrics;
  let companies: { partnerId: string; companyId: string }[];

  beforeAll(async () => {
    s = await scratchDatabase();
    config = {
      ...loadConfig({ DATABASE_URL: s.databaseUrl, REDIS_URL: TEST_REDIS_URL, ADMIN_TOKEN }),
      callbackTimeoutMs: TIMEOUT_MS,
      callbackRetryScheduleMs: SCHEDULE,
      callbackReadyWindow: READY_WINDOW,
      callbackDestinationConcurrency: WINDOW_MAX,
      callbackBreakerThreshold: 3,
      callbackBreakerProbeMs: { first: 1000, last: PROBE_LAST },
    };
    metrics = new Metrics(s.db);
    companies = [await seedCompany(s.pool), await seedCompany(s.pool)];
  }, 60_000);
  afterAll(async () => {
    await s?.close();
  });

  const worldArb = fc.record({
    destinations: fc.integer({ min: 1, max: 3 }),
    workers: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 2 }),
    steps: fc.array(stepArb, { minLength: 1, maxLength: 40 }),
  });

  it('keeps every callback in one consistent state and in-flight within windows, slots and the unproven share; fails only for a cause; delivers everything once destinations answer, and a redelivery delivers what failed', async () => {
    const property = fc.asyncProperty(worldArb, async (spec) => {
      await s.pool.query(`TRUNCATE callback_attempts, callbacks, destinations, callback_destinations, delivery_workers`);
      const w = new World(s, config, metrics, companies, spec.destinations, spec.workers);
      await w.announce();
      for (const step of spec.steps) {
        await apply(w, step);
        await safety(w);
      }
      await drain(w);
      for (const c of (await w.callbacks()).filter((x) => x.status === 'failed' && x.url_removed_at === null)) await w.redeliver(c.id);
      await drain(w);
      // Those whose URL the partner removed stay failed: nowhere to send them.
      const left = (await w.callbacks()).filter((c) => c.status !== 'delivered' && !(c.status === 'failed' && /^callback URL removed/.test(c.last_error ?? '')));
      check(left.length === 0, () => `not delivered after a redelivery: ${JSON.stringify(left)}`);
    });
    await fc.assert(property, { numRuns: Number(process.env.FC_RUNS ?? 25), seed: Number(process.env.FC_SEED ?? 20_261_125) });
  }, 240_000);

  async function fresh(destinations: number, workers: number[]): Promise<World> {
    await s.pool.query(`TRUNCATE callback_attempts, callbacks, destinations, callback_destinations, delivery_workers`);
    const w = new World(s, config, metrics, companies, destinations, workers);
    await w.announce();
    return w;
  }
  const statuses = async (w: World) => (await w.callbacks()).map((c) => [c.status, c.attempt_count]);

  it("returns a crashed worker's callbacks once their lease lapses (LAPSE), not before, and delivers them spending no attempt", async () => {
    const w = await fresh(1, [4]);
    for (let i = 0; i < 3; i++) await w.commit(ORIGINS[0]);
    expect(await w.pass()).toHaveLength(2); // a new destination's initial window
    await w.crash(0);
    await w.restart(0);
    await w.tick(LEASE_MS - 1000);
    await w.sweep();
    expect(await statuses(w)).toEqual([['sending', 0], ['sending', 0], ['pending', 0]]);
    await w.tick(2000);
    await w.sweep();
    expect(await statuses(w)).toEqual([['pending', 0], ['pending', 0], ['pending', 0]]);
    await drain(w);
    expect(await statuses(w)).toEqual([['delivered', 1], ['delivered', 1], ['delivered', 1]]);
  });

  it('gives each job the lease its callbacks hold when a pass admits in rounds, and they are sent at once', async () => {
    const w = await fresh(2, [6]);
    const [a, b] = ORIGINS;
    await w.commit(a);
    for (let i = 0; i < 6; i++) await w.commit(b);
    await s.pool.query(`UPDATE destinations SET window_size = $1, last_ok_at = now()`, [WINDOW_MAX]);
    // Two each planned; a has one, so b takes another in a second round, a statement (and a lease) of its own.
    const admitted = await w.pass();
    expect(admitted).toHaveLength(4);
    await afterPass(w, admitted);
    for (const e of [...w.entries]) await w.settle(e, 'ok');
    expect((await w.callbacks()).filter((c) => c.status === 'delivered')).toHaveLength(4);
  });

  it('fails the callbacks waiting on an open circuit once their schedule ends (EXPIRE), naming the outage; a redelivery after recovery delivers them', async () => {
    const w = await fresh(1, [4]);
    w.behaviour.set(ORIGINS[0], '5xx');
    for (let i = 0; i < 3; i++) await w.commit(ORIGINS[0]);
    for (let i = 0; i < 5 && (await w.destinations())[0].opened_at === null; i++) {
      await w.pass();
      for (const e of [...w.entries]) await w.settle(e, null);
      await w.tick(SCHEDULE[0] * 1.3);
    }
    expect((await w.destinations())[0].opened_at).not.toBeNull();
    await w.commit(ORIGINS[0]);
    await w.tick(SCHEDULE_TOTAL + 1000);
    await w.sweep();
    const rows = await w.callbacks();
    expect(rows.map((c) => c.status)).toEqual(['failed', 'failed', 'failed', 'failed']);
    expect(rows.every((c) => /^destination https:\/\/a\.test unavailable \(circuit open since .*, last error: HTTP 503\); attempt schedule ended while waiting$/.test(c.last_error!))).toBe(true);
    for (const c of rows) await w.redeliver(c.id);
    await drain(w);
    expect((await w.callbacks()).map((c) => c.status)).toEqual(['delivered', 'delivered', 'delivered', 'delivered']);
  });

  it('keeps callbacks moved while in flight in their old destination\'s window (MOVE, ADMIT, RECORD): no request beyond it, and no second probe of an open circuit', async () => {
    const w = await fresh(2, [6]);
    const [a, b] = ORIGINS;
    for (let i = 0; i < 2; i++) await w.commit(a, 0);
    await w.commit(a, 1);
    expect(await w.pass()).toHaveLength(INITIAL_WINDOW); // a.test is new: its window is the initial one
    await w.moveUrl(0, b); // company 0's two callbacks in flight to a.test move to b.test
    expect(await w.pass()).toEqual([]); // a.test's window is still full: its requests are under way
    expect(w.entries.filter((e) => e.dest === a)).toHaveLength(INITIAL_WINDOW);
    const rows = await w.callbacks();
    expect(rows.map((c) => [c.destination, c.status])).toEqual([[a, 'sending'], [a, 'sending'], [a, 'pending']]);
    // They settle (a 503), and only then move: their retries go to b.test.
    for (const e of [...w.entries]) await w.settle(e, '5xx');
    expect((await w.callbacks()).map((c) => [c.destination, c.status])).toEqual([[b, 'pending'], [b, 'pending'], [a, 'pending']]);
    await drain(w);

    // An open circuit's probe moved away leaves the circuit with its one probe in flight.
    const o = await fresh(2, [6]);
    await o.commit(a, 0);
    await o.commit(a, 1);
    await o.openCircuit(a);
    expect(await o.pass()).toHaveLength(1); // the probe
    await o.moveUrl(0, b); // the probe's company moves: company 1's callback still waits at a.test
    await afterPass(o, await o.pass());
    expect(o.entries.filter((e) => e.dest === a)).toHaveLength(1);
  });
});
