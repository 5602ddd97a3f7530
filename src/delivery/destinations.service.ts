import { Injectable, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Gauge } from 'prom-client';
import { DataSource } from 'typeorm';
import { DomainError, notFound } from '../common/domain-error.js';
import { Metrics } from '../metrics/metrics.js';
import { creditOf, DestinationGate, DestinationSnapshot, DestinationState } from './destination-gate.js';

export interface DestinationView {
  origin: string;
  state: DestinationState;
  consecutiveFailures: number;
  openedAt: string | null;
  nextProbeAt: string | null;
  lastError: string | null;
  waiting: number;
  inFlight: number;
}

const view = (d: DestinationSnapshot, own?: { waiting: number; inFlight: number }): DestinationView => ({
  origin: d.origin,
  state: d.state,
  consecutiveFailures: d.consecutiveFailures,
  openedAt: d.openedAt?.toISOString() ?? null,
  nextProbeAt: d.nextProbeAt?.toISOString() ?? null,
  lastError: d.lastError,
  waiting: own?.waiting ?? d.waiting,
  inFlight: own?.inFlight ?? d.inFlight,
});

/**
 * What operators and partners see of destinations: the shared state from Redis, the list of
 * destinations from PostgreSQL (`callback_destinations`, noted by the relay). A partner sees the
 * destinations its callbacks went to, with `waiting` and `inFlight` counting only its own
 * callbacks: a destination may be shared, and another partner's volume is not theirs to see.
 */
@Injectable()
export class DestinationsService implements OnModuleInit {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly gate: DestinationGate,
    private readonly metrics: Metrics,
  ) {}

  onModuleInit(): void {
    const gate = this.gate;
    new Gauge({
      name: 'funding_destinations_open',
      help: 'Destinations whose circuit is open or half-open',
      registers: [this.metrics.registry],
      async collect() {
        this.set(await gate.openCount());
      },
    });
    new Gauge({
      name: 'funding_callbacks_waiting',
      help: 'Callbacks parked until their destination can take them, by why: an open circuit, or no free slot',
      labelNames: ['reason'] as const,
      registers: [this.metrics.registry],
      async collect() {
        const waiting = await gate.waiting();
        const states = await gate.snapshot([...waiting.keys()]);
        let open = 0;
        let full = 0;
        for (const d of states) (d.state === 'closed' ? (full += d.waiting) : (open += d.waiting));
        this.set({ reason: 'circuit_open' }, open);
        this.set({ reason: 'no_slot' }, full);
      },
    });
  }

  async list(f: { partnerId?: string; state?: DestinationState }): Promise<DestinationView[]> {
    const origins: { origin: string }[] = await this.db.query(
      `SELECT DISTINCT origin FROM callback_destinations WHERE ($1::uuid IS NULL OR partner_id = $1) ORDER BY origin`,
      [f.partnerId ?? null],
    );
    const states = (await this.gate.snapshot(origins.map((o) => o.origin))).filter((d) => !f.state || d.state === f.state);
    return states.map((d) => view(d));
  }

  /** The partner's own destinations, counting only its own callbacks. */
  async listForPartner(partnerId: string): Promise<DestinationView[]> {
    const origins: { origin: string }[] = await this.db.query(`SELECT origin FROM callback_destinations WHERE partner_id = $1 ORDER BY origin`, [partnerId]);
    const states = await this.gate.snapshot(origins.map((o) => o.origin));
    const out: DestinationView[] = [];
    for (const d of states) {
      // A slot is named by its callback's id, or is a worker's credit naming the partner it carries.
      const byCallback = d.leases.filter((l) => creditOf(l) === null);
      const credits = d.leases.filter((l) => creditOf(l) === partnerId).length;
      const [own]: { waiting: string; in_flight: string }[] = await this.db.query(
        `SELECT (SELECT count(*) FROM callbacks WHERE destination = $1 AND status = 'pending' AND parked_at IS NOT NULL AND partner_id = $2) AS waiting,
                (SELECT count(*) FROM callbacks WHERE id = ANY($3::uuid[]) AND partner_id = $2) AS in_flight`,
        [d.origin, partnerId, byCallback],
      );
      out.push(view(d, { waiting: Number(own.waiting), inFlight: Number(own.in_flight) + credits }));
    }
    return out;
  }

  /** An operator's "probe now" for an open destination; the relay's next sweep (≤ 1 s) sends it. */
  async probe(origin: string): Promise<void> {
    const known: unknown[] = await this.db.query(`SELECT 1 FROM callback_destinations WHERE origin = $1 LIMIT 1`, [origin]);
    if (known.length === 0) throw notFound('Destination');
    const state = await this.gate.probeNow(origin);
    if (state === 'closed') throw new DomainError('conflict', 'DESTINATION.NOT_OPEN', `Destination ${origin} is closed: there is nothing to probe`);
  }
}
