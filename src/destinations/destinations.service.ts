import { Injectable, OnModuleInit } from '@nestjs/common';
import { AuditLog } from '../audit/audit-log.js';
import { trackedValues } from '../audit/audit-changes.js';
import type { Actor } from '../operators/actor.js';
import { InjectDataSource } from '@nestjs/typeorm';
import { Gauge } from 'prom-client';
import { DataSource } from 'typeorm';
import { DomainError, notFound } from '../http/domain-error.js';
import { ErrorCode } from '../http/error-codes.js';
import { Metrics } from '../metrics/metrics.js';
import { CallbackRecorder } from '../callbacks/callback-recorder.js';
import { DESTINATION_COLUMNS, DestinationRow, stateOf } from '../delivery/destination-store.js';
import { circuitOf } from '../delivery/destination-window.js';

export type CircuitState = 'closed' | 'open' | 'half_open';

export interface DestinationView {
  origin: string;
  state: CircuitState;
  consecutiveFailures: number;
  openedAt: string | null;
  nextProbeAt: string | null;
  lastError: string | null;
  waiting: number;
  inFlight: number;
}

/** Waiting callbacks are counted up to this many per destination: a scrape or a list stays cheap whatever the backlog. */
export const WAITING_COUNT_CAP = 10_000;

/**
 * Destinations with their counts. `$1` scopes the counts (and the list) to one partner's
 * callbacks, or to all when null; the circuit is the destination's, whoever's callbacks probe it.
 */
const LIST = `
  SELECT ${DESTINATION_COLUMNS},
         (SELECT count(*) FROM callbacks c WHERE c.destination = d.origin AND c.status = 'sending')::int AS sending,
         (SELECT count(*) FROM callbacks c WHERE c.destination = d.origin AND c.status = 'sending' AND ($1::uuid IS NULL OR c.partner_id = $1))::int AS in_flight,
         (SELECT count(*) FROM (SELECT 1 FROM callbacks c
                                 WHERE c.destination = d.origin AND c.status = 'pending' AND c.next_attempt_at <= now()
                                   AND ($1::uuid IS NULL OR c.partner_id = $1) LIMIT ${WAITING_COUNT_CAP}) w)::int AS waiting
    FROM destinations d
   WHERE d.origin IN (SELECT origin FROM callback_destinations WHERE $1::uuid IS NULL OR partner_id = $1)
   ORDER BY d.origin`;

type ListRow = DestinationRow & { sending: number; in_flight: number; waiting: number };

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * What operators and partners see of destinations, read from PostgreSQL (`destinations`, shared
 * by every process). A partner sees the destinations its callbacks went to, with `waiting` and
 * `inFlight` counting only its own callbacks: a destination may be shared, and another partner's
 * volume is not theirs to see.
 */
@Injectable()
export class DestinationsService implements OnModuleInit {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly metrics: Metrics,
    private readonly callbacks: CallbackRecorder,
    private readonly audit: AuditLog,
  ) {}

  onModuleInit(): void {
    const db = this.db;
    new Gauge({
      name: 'funding_destinations_open',
      help: 'Destinations whose circuit is open or half-open',
      registers: [this.metrics.registry],
      async collect() {
        const [row]: { n: number }[] = await db.query(`SELECT count(*)::int AS n FROM destinations WHERE opened_at IS NOT NULL`);
        this.set(row.n);
      },
    });
    new Gauge({
      name: 'funding_callbacks_waiting',
      help: `Callbacks due and waiting for their destination, by why: an open circuit, or no room in its window (up to ${WAITING_COUNT_CAP} per destination)`,
      labelNames: ['reason'] as const,
      registers: [this.metrics.registry],
      async collect() {
        const rows: { open: boolean; n: number }[] = await db.query(
          `SELECT d.opened_at IS NOT NULL AS open, count(*)::int AS n
             FROM destinations d, LATERAL (SELECT 1 FROM callbacks c WHERE c.destination = d.origin AND c.status = 'pending' AND c.next_attempt_at <= now() LIMIT ${WAITING_COUNT_CAP}) w
            GROUP BY 1`,
        );
        this.set({ reason: 'circuit_open' }, rows.find((r) => r.open)?.n ?? 0);
        this.set({ reason: 'no_slot' }, rows.find((r) => !r.open)?.n ?? 0);
      },
    });
  }

  async list(f: { partnerId?: string; state?: CircuitState }): Promise<DestinationView[]> {
    return (await this.read(f.partnerId ?? null)).filter((d) => !f.state || d.state === f.state);
  }

  /** The partner's own destinations, counting only its own callbacks. */
  listForPartner(partnerId: string): Promise<DestinationView[]> {
    return this.read(partnerId);
  }

  /** An operator's "probe now" for an open destination: admission sends it within a second. Audited in its transaction. */
  async probe(actor: Actor, origin: string): Promise<void> {
    await this.db.transaction(async (m) => {
      const [rows]: [{ before: Date | null; after: Date }[], number] = await m.query(
        `UPDATE destinations d SET next_probe_at = now(), version = d.version + 1
           FROM (SELECT origin AS o, next_probe_at AS before FROM destinations WHERE origin = $1 AND opened_at IS NOT NULL FOR UPDATE) old
          WHERE d.origin = old.o
          RETURNING old.before, d.next_probe_at AS after`,
        [origin],
      );
      if (rows.length === 0) {
        const known: unknown[] = await m.query(`SELECT 1 FROM destinations WHERE origin = $1`, [origin]);
        if (known.length === 0) throw notFound('Destination');
        throw new DomainError('conflict', ErrorCode.destination_not_open, `Destination ${origin} is closed: there is nothing to probe`);
      }
      await this.audit.record(m, actor, { targetType: 'destination', targetId: origin, before: trackedValues({ nextProbeAt: rows[0].before }), after: trackedValues({ nextProbeAt: rows[0].after }) });
    });
    this.callbacks.committed(1);
  }

  private async read(partnerId: string | null): Promise<DestinationView[]> {
    const rows: ListRow[] = await this.db.query(LIST, [partnerId]);
    return rows.map((r) => {
      const s = stateOf(r);
      return {
        origin: r.origin,
        state: circuitOf(s, r.sending),
        consecutiveFailures: s.failures,
        openedAt: iso(s.openedAt),
        nextProbeAt: iso(s.nextProbeAt),
        lastError: s.lastError,
        waiting: r.waiting,
        inFlight: r.in_flight,
      };
    });
  }
}
