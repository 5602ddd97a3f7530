import { Gauge, Registry } from 'prom-client';
import { DestinationSummaries } from '../callbacks/index.js';

/**
 * How many open destinations have a series of their own: those open the longest. Enough for the
 * page to name who is down (the longest-open is always among them), few enough that 10,000 partners
 * with a receiver each down make 10 series, not 10,000.
 */
export const OPEN_DESTINATION_SERIES = 10;

/**
 * How long each of the destinations open the longest has been open, labelled with its partner's
 * name (`partner`, what a person recognises), the partner's id (`partner_id`: names need not be
 * unique, and GET /admin/v1/partners/{id} takes it) and the origin. Read at scrape time (one range
 * of `destinations_open_idx`); the gauge is emptied first, so a destination that closed or fell out
 * of the longest-open ones has no series any more.
 */
export function registerOpenDestinationsGauge(registry: Registry, summaries: DestinationSummaries): void {
  new Gauge({
    name: 'funding_destination_circuit_open_seconds',
    help:
      `How long each destination open the longest (at most ${OPEN_DESTINATION_SERIES}) has been open, ` +
      'by partner name, partner_id and origin; none once it closes',
    labelNames: ['partner', 'partner_id', 'origin'] as const,
    registers: [registry],
    async collect() {
      const open = await summaries.longestOpenDestinations(OPEN_DESTINATION_SERIES);
      this.reset();
      for (const d of open) this.set({ partner: d.partner, partner_id: d.partner_id, origin: d.origin }, d.seconds);
    },
  });
}
