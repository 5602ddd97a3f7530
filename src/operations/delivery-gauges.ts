import { Gauge, Registry } from 'prom-client';
import { DeliveryCounts, DeliveryState } from '../callbacks/index.js';

/**
 * The gauges the alert rules (ops/alerts.yml) watch that no counter shows, read at scrape time
 * (callbacks/store/counts.ts).
 */
export function registerDeliveryGauges(registry: Registry, counts: DeliveryCounts): void {
  // One read per scrape: prom-client collects the gauges together, and they share the read under way.
  let reading: Promise<DeliveryState> | null = null;
  const read = (): Promise<DeliveryState> =>
    (reading ??= counts.deliveryState().then(
      (state) => {
        reading = null;
        return state;
      },
      (e: unknown) => {
        reading = null;
        throw e;
      },
    ));
  const gauge = (name: string, help: string, value: (s: DeliveryState) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        this.set(value(await read()));
      },
    });
  gauge(
    'funding_delivery_workers',
    'Worker processes alive (announcing their delivery slots), all processes together',
    (s) => s.workers,
  );
  gauge(
    'funding_destination_circuit_open_longest_seconds',
    'How long the circuit open the longest has been open (0: none open)',
    (s) => s.open_longest,
  );
  gauge(
    'funding_callback_feed_held_seconds',
    "How long the callback feed's horizon has been held back: " +
      'the age of the oldest transaction of this database holding a transaction id (0: none)',
    (s) => s.feed_held,
  );
}
