import { Injectable, OnModuleInit } from '@nestjs/common';
import { type Actor, AuditLog, trackedValues } from '../../operators/index.js';
import { Gauge } from 'prom-client';
import { DomainError, ErrorCode, notFound, TransactionRunner } from '../../platform/index.js';
import { Metrics } from '../../operations/index.js';
import {
  CircuitState,
  DestinationCircuits,
  destinationKey,
  DestinationRepository,
  nextProbeShown,
  WAITING_COUNT_CAP,
} from '../../callbacks/index.js';
import { stateOf } from '../destination-store.js';
import { circuitOf } from '../destination-window.js';

export { WAITING_COUNT_CAP };
export type { CircuitState };

export interface DestinationView {
  partnerId: string;
  origin: string;
  state: CircuitState;
  consecutiveFailures: number;
  openedAt: string | null;
  nextProbeAt: string | null;
  lastError: string | null;
  waiting: number;
  inFlight: number;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * What operators and partners see of destinations, read from PostgreSQL (`destinations`, shared
 * by every process). A destination is one partner's origin: a partner sees its own, whose state
 * and counts are its callbacks' alone, whoever else's receivers share the origin.
 */
@Injectable()
export class DestinationsService extends DestinationCircuits implements OnModuleInit {
  constructor(
    private readonly destinations: DestinationRepository,
    private readonly metrics: Metrics,
    private readonly writes: TransactionRunner,
    private readonly audit: AuditLog,
  ) {
    super();
  }

  onModuleInit(): void {
    const destinations = this.destinations;
    new Gauge({
      name: 'funding_destinations_open',
      help: 'Destinations whose circuit is open or half-open',
      registers: [this.metrics.registry],
      async collect() {
        this.set(await destinations.countOpenDestinations());
      },
    });
    new Gauge({
      name: 'funding_callbacks_waiting',
      help:
        'Callbacks due and waiting for their destination, by why: an open circuit, or no room in its window ' +
        `(up to ${WAITING_COUNT_CAP} per destination)`,
      labelNames: ['reason'] as const,
      registers: [this.metrics.registry],
      async collect() {
        const waiting = await destinations.countWaitingByCircuit();
        this.set({ reason: 'circuit_open' }, waiting.open);
        this.set({ reason: 'no_slot' }, waiting.closed);
      },
    });
  }

  async list(f: { partnerId?: string; origin?: string; state?: CircuitState }): Promise<DestinationView[]> {
    return (await this.read(f.partnerId ?? null, f.origin ?? null)).filter((d) => !f.state || d.state === f.state);
  }

  /** The partner's own destinations. */
  listForPartner(partnerId: string): Promise<DestinationView[]> {
    return this.read(partnerId, null);
  }

  /**
   * The circuit states of the partner's destinations at these origins
   * (DestinationCircuits: the funding module's URL list asks).
   */
  async statesOf(partnerId: string, origins: string[]): Promise<Map<string, CircuitState>> {
    const states = new Map<string, CircuitState>(origins.map((o) => [o, 'closed']));
    for (const r of await this.destinations.destinationStates(partnerId, origins))
      states.set(r.origin, circuitOf(stateOf(r), r.sending, r.now));
    return states;
  }

  /**
   * An operator's "probe now" for the open destinations at an origin (one partner's, or every
   * partner's): each one's probe is due now, so admission sends its oldest waiting callback within
   * a second, and one with nothing waiting is half-open (its next callback is the probe). Audited in
   * its transaction, an entry per destination; yields those it brought forward, as they stand after.
   */
  async probe(actor: Actor, origin: string, partnerId: string | null): Promise<DestinationView[]> {
    const probed = await this.writes.transaction(async (m) => {
      const done = await this.destinations.probeNow(m, origin, partnerId);
      if (done === 'unknown') throw notFound('Destination');
      if (done === 'closed')
        throw new DomainError(
          'conflict',
          ErrorCode.destination_not_open,
          `Destination ${origin}${partnerId ? ` of partner ${partnerId}` : ''} is closed: there is nothing to probe`,
        );
      for (const p of done) {
        await this.audit.record(m, actor, {
          targetType: 'destination',
          targetId: destinationKey(p.partnerId, origin),
          before: trackedValues({ nextProbeAt: p.before }),
          after: trackedValues({ nextProbeAt: p.after }),
        });
      }
      return new Set(done.map((p) => p.partnerId));
    });
    return (await this.read(partnerId, origin)).filter((d) => probed.has(d.partnerId));
  }

  private async read(partnerId: string | null, origin: string | null): Promise<DestinationView[]> {
    const rows = await this.destinations.listDestinations({ partnerId, origin });
    return rows.map((r) => {
      const s = stateOf(r);
      return {
        partnerId: r.partner_id,
        origin: r.origin,
        state: circuitOf(s, r.sending, r.now),
        consecutiveFailures: s.failures,
        openedAt: iso(s.openedAt),
        nextProbeAt: iso(nextProbeShown(s, r.now)),
        lastError: s.lastError,
        waiting: r.waiting,
        inFlight: r.sending,
      };
    });
  }
}
