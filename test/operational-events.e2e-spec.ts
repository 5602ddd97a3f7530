/**
 * Operational events over the real statements (test/support/statement-world.ts): random histories
 * of destinations opening, closing and exhausting callbacks, settled by two worker processes that
 * each remember destinations their own way, must yield exactly the events docs/partners.md ("Operational events") says —
 * one `destination.failing` per opening and one `destination.recovered` per closing for each
 * partner with callbacks there, `waiting` as it stands; `callbacks.failed` counting every callback
 * failed, at most one per destination and partner in 5 minutes, the first at once; each event
 * delivered as a callback to a partner with an operationsUrl and only recorded for the others.
 * FC_SEED=<seed> replays a failure.
 */
import { destinationKey, originOfKey } from '../src/callbacks/callback-destination.js';
import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import type { ScratchDatabase } from './support/scratch-database.js';
import type { Behaviour } from './support/delivery-model.js';
import { apply, check, Checks, drain, Step, stepsOf, tableSteps } from './support/statement-steps.js';
import { statementSuite } from './support/statement-suite.js';
import type { World } from './support/statement-world.js';

const OPS = 'https://ops.test';
const WINDOW_MS = 5 * 60_000;

interface Event {
  id: string;
  partner_id: string;
  type: string;
  created_ms: number;
  data: Record<string, unknown>;
  sent: boolean;
}

/** What the tables said at the last look: each destination's opened_at, each callback's status and destination. */
interface Seen {
  opened: Map<string, number | null>;
  status: Map<string, { status: string; destination: string; partner: string; counted: boolean }>;
  events: number;
}

class Observer {
  /** Callbacks failed since the start, by partner and destination (what callbacks.failed must count). */
  readonly failed = new Map<string, number>();
  private seen: Seen = { opened: new Map(), status: new Map(), events: 0 };

  constructor(
    private readonly s: ScratchDatabase,
    private readonly w: World,
    private readonly withOps: string,
  ) {}

  private async events(): Promise<Event[]> {
    return (
      await this.s.pool.query<Event>(
        `SELECT id, partner_id, type, (extract(epoch FROM created_at) * 1000)::float8 AS created_ms, data, sent FROM operational_events ORDER BY seq`,
      )
    ).rows;
  }

  private async look(): Promise<
    Seen & { pending: { partner_id: string; destination: string }[]; partnersAt: Map<string, string[]> }
  > {
    const dests = await this.w.destinations();
    const rows = (
      await this.s.pool.query<{
        id: string;
        status: string;
        destination: string;
        partner_id: string;
        counted: boolean;
      }>(
        `SELECT id, status, destination, partner_id, (event_type IS NULL AND NOT test AND url_removed_at IS NULL) AS counted FROM callbacks`,
      )
    ).rows;
    // A destination is one partner's origin: its events go to that partner only.
    const partnersAt = new Map<string, string[]>(dests.map((d) => [d.key, [d.partner_id]]));
    return {
      // In the history's own time (stored times move back as it passes: World.shift).
      opened: new Map(dests.map((d) => [d.key, d.opened_at === null ? null : d.opened_at + this.w.shift])),
      status: new Map(
        rows.map((r) => [
          r.id,
          { status: r.status, destination: r.destination, partner: r.partner_id, counted: r.counted },
        ]),
      ),
      events: (await this.events()).length,
      pending: rows.filter((r) => r.status === 'pending' && r.counted),
      partnersAt,
    };
  }

  /** After one settlement's statements: each opening and closing it made, and only those, told to each partner there. */
  readonly afterSettle = async (): Promise<void> => {
    const now = await this.look();
    const fresh = (await this.events()).slice(this.seen.events).filter((e) => e.type !== 'callbacks.failed');
    const expected: string[] = [];
    for (const [key, opened] of now.opened) {
      const origin = originOfKey(key);
      const before = this.seen.opened.get(key) ?? null;
      const type =
        before === null && opened !== null
          ? 'destination.failing'
          : before !== null && opened === null
            ? 'destination.recovered'
            : null;
      if (type === null) continue;
      for (const partner of now.partnersAt.get(key) ?? []) {
        expected.push(`${partner} ${type} ${origin}`);
        const e = fresh.find((x) => x.partner_id === partner && x.type === type && x.data.destination === origin);
        check(e !== undefined, () => `${type} of ${origin} for ${partner}: no event (${JSON.stringify(fresh)})`);
        const waiting = now.pending.filter((c) => c.partner_id === partner && c.destination === key).length;
        check(
          e!.data.waiting === waiting,
          () => `${type} of ${origin} for ${partner}: waiting ${String(e!.data.waiting)}, ${waiting} wait`,
        );
        const at = (t: number) => new Date(Math.floor(t - this.w.shift)).toISOString();
        if (type === 'destination.failing')
          check(e!.data.since === at(opened!), () => `since ${String(e!.data.since)}, opened ${at(opened!)}`);
        else
          check(
            e!.data.failingSince === at(before!),
            () => `failingSince ${String(e!.data.failingSince)}, opened ${at(before!)}`,
          );
      }
    }
    const got = fresh.map((e) => `${e.partner_id} ${e.type} ${String(e.data.destination)}`).sort();
    check(
      JSON.stringify(got) === JSON.stringify(expected.sort()),
      () => `circuit events ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`,
    );
    await this.account(now);
  };

  /**
   * The failures since the last look, counted by partner and destination, each told at once unless
   * its window told one less than 5 minutes ago (time has not moved since the statement that
   * failed it); what is seen now becomes the last look.
   */
  private async account(now: Seen): Promise<void> {
    const grew = new Set<string>();
    for (const [id, c] of now.status) {
      if (c.counted && c.status === 'failed' && this.seen.status.get(id)?.status !== 'failed') {
        const key = c.destination; // the partner and the origin
        this.failed.set(key, (this.failed.get(key) ?? 0) + 1);
        grew.add(key);
      }
    }
    this.seen = now;
    if (grew.size === 0) return;
    const nowMs = (await this.s.pool.query<{ ms: number }>(`SELECT (extract(epoch FROM now()) * 1000)::float8 AS ms`))
      .rows[0].ms;
    const told = (await this.events()).filter((e) => e.type === 'callbacks.failed');
    for (const key of grew) {
      const last = told.filter((e) => `${e.partner_id} ${String(e.data.destination)}` === key).at(-1);
      check(
        last !== undefined && nowMs - last.created_ms < WINDOW_MS,
        () => `${key}: failed now, no callbacks.failed within the last 5 minutes`,
      );
    }
  }

  /** After each step: every failure counted once in an event or a window's pending count; windows 5 minutes apart, the first at once. */
  readonly afterStep = async (): Promise<void> => {
    const now = await this.look();
    const events = await this.events();
    // Circuit events come only from settlements, and afterSettle has read each of them.
    const unread = events.slice(this.seen.events).filter((e) => e.type !== 'callbacks.failed');
    check(unread.length === 0, () => `circuit events outside a settlement: ${JSON.stringify(unread)}`);
    await this.account(now);
    const failedEvents = events.filter((e) => e.type === 'callbacks.failed');
    const notices = (
      await this.s.pool.query<{ partner_id: string; destination: string; pending_count: number }>(
        `SELECT partner_id, destination, pending_count FROM failure_notices`,
      )
    ).rows;
    for (const [key, n] of this.failed) {
      const [partner, destination] = [key.slice(0, key.indexOf(' ')), originOfKey(key)];
      const told = failedEvents.filter((e) => e.partner_id === partner && e.data.destination === destination);
      const held = notices.find((x) => x.partner_id === partner && x.destination === key)?.pending_count ?? 0;
      const counted = told.reduce((k, e) => k + (e.data.count as number), 0) + held;
      check(counted === n, () => `${key}: ${n} failed, events count ${counted - held} and ${held} held`);
      for (let i = 1; i < told.length; i++)
        check(
          told[i].created_ms - told[i - 1].created_ms >= WINDOW_MS - 1,
          () => `${key}: callbacks.failed ${told[i].created_ms - told[i - 1].created_ms} ms apart`,
        );
    }
    check(
      failedEvents.every(
        (e) => this.failed.has(`${e.partner_id} ${String(e.data.destination)}`) && (e.data.count as number) > 0,
      ),
      () => `callbacks.failed for nothing: ${JSON.stringify(failedEvents)}`,
    );
    await this.delivered(events);
  };

  /** The events of the partner with an operationsUrl are callbacks to it, the event itself as body; the others' are only recorded. */
  private async delivered(events: Event[]): Promise<void> {
    const rows = (
      await this.s.pool.query<{ id: string; url: string; body: string; event_type: string }>(
        `SELECT id, url, body, event_type FROM callbacks WHERE event_type IS NOT NULL`,
      )
    ).rows;
    const byId = new Map(rows.map((r) => [r.id, r]));
    check(
      rows.length === events.filter((e) => e.sent).length,
      () => `${rows.length} event callbacks, ${events.filter((e) => e.sent).length} events sent`,
    );
    for (const e of events) {
      const row = byId.get(e.id);
      check(
        e.sent === (e.partner_id === this.withOps) && (row !== undefined) === e.sent,
        () => `event ${e.id} of ${e.partner_id}: sent ${e.sent}, callback ${row !== undefined}`,
      );
      if (!row) continue;
      const body = JSON.parse(row.body) as { type: string; timestamp: string; data: unknown };
      check(
        row.url === `${OPS}/events` &&
          row.event_type === e.type &&
          body.type === e.type &&
          isDeepStrictEqual(body.data, e.data) &&
          Object.keys(body).join() === 'type,timestamp,data',
        () => `event ${e.id}'s callback: ${JSON.stringify(row)}`,
      );
    }
  }
}

describe('operational events from the real statements, through random histories across two worker processes', () => {
  const suite = statementSuite();
  beforeAll(() =>
    suite.s.pool.query(`UPDATE partners SET operations_url = $2 WHERE id = $1`, [
      suite.companies[0].partnerId,
      `${OPS}/events`,
    ]),
  );

  // The shared steps, with more callbacks, failing answers and 5-minute waits: circuits open, close and callbacks fail in most histories.
  const failing = fc.constantFrom<Behaviour>('5xx', '429', 'hang', '410');
  const steps = fc.array(
    fc.oneof(
      // Retention aside: it deletes the events and deliveries this test counts.
      { weight: 10, arbitrary: stepsOf(tableSteps(['prune'])) },
      { weight: 2, arbitrary: fc.record({ k: fc.constant('behave' as const), d: fc.nat(2), b: failing }) },
      {
        weight: 4,
        arbitrary: fc.record({ k: fc.constant('settle' as const), pick: fc.nat(), as: failing, late: fc.nat(50) }),
      },
      { weight: 3, arbitrary: fc.record({ k: fc.constant('commit' as const), d: fc.nat(2), c: fc.nat(1) }) },
      { weight: 3, arbitrary: fc.constant<Step>({ k: 'pass' }) },
      { weight: 1, arbitrary: fc.constant<Step>({ k: 'tick', ms: WINDOW_MS + 1 }) },
    ),
    { minLength: 20, maxLength: 80, size: 'max' },
  );

  it('yields exactly one event per opening and per closing for each partner there, every failure counted once in 5-minute windows, sent only to an operationsUrl', async () => {
    const property = fc.asyncProperty(steps, async (history) => {
      const { s, companies } = suite;
      const w = await suite.world(3, [2, 2]);
      w.behaviour.set(destinationKey(suite.companies[0].partnerId, OPS), 'ok'); // the events' destination: answers (apply's steps pick only the first three origins)
      const o = new Observer(s, w, companies[0].partnerId);
      w.afterSettle = o.afterSettle;
      const checks: Checks = { admitted: () => Promise.resolve(), settled: o.afterStep };
      for (const step of history) {
        await apply(w, step, checks);
        await o.afterStep();
      }
      await drain(w, checks);
      // The failures a window still holds are told once it is over, by the sweep.
      await w.tick(WINDOW_MS + 1);
      await w.sweep();
      await o.afterStep();
      const held = (
        await s.pool.query<{ n: number }>(`SELECT coalesce(sum(pending_count), 0)::int AS n FROM failure_notices`)
      ).rows[0].n;
      check(held === 0, () => `${held} failures still held after their window`);
      await drain(w, checks);
      // Each event's delivery settled like a callback's: delivered, failed by its receiver's answers (a 410 here),
      // or failed by an outage of its receiver that outlasted its schedule (one that never answered opens at its
      // first timeout).
      const unsettled = (
        await s.pool.query(
          `SELECT id, status, last_error FROM callbacks WHERE event_type IS NOT NULL AND NOT (status = 'delivered'
             OR (status = 'failed' AND (attempt_count > 0 OR last_error LIKE '%attempt schedule ended while waiting')))`,
        )
      ).rows;
      check(
        unsettled.length === 0,
        () => `events neither delivered nor failed by an answer or an outage: ${JSON.stringify(unsettled)}`,
      );
      if (process.env.FC_STATS)
        console.log(
          'STATS',
          JSON.stringify(
            (
              await s.pool.query(`SELECT type, count(*)::int AS n FROM operational_events GROUP BY type ORDER BY type`)
            ).rows.map((r) => r.type),
          ),
        );
    });
    await fc.assert(property, {
      interruptAfterTimeLimit: 250_000,
      numRuns: Number(process.env.FC_RUNS ?? 40),
      seed: Number(process.env.FC_SEED ?? 20_261_128),
    });
  }, 300_000);
});
