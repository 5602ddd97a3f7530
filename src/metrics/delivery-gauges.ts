import { Gauge, Registry } from 'prom-client';
import { DataSource } from 'typeorm';

/**
 * How long the callback feed has been held back (callback-feed-page.ts): the age of the oldest
 * transaction of this database that has a transaction id (it wrote, or may write, callbacks that
 * every later one must wait for), or of the oldest prepared one; 0 when none. A scan of the
 * server's backends, never of a table.
 */
const FEED_HELD = `(SELECT coalesce(extract(epoch FROM now() - least(
      (SELECT min(xact_start) FROM pg_stat_activity WHERE datname = current_database() AND backend_xid IS NOT NULL AND pid <> pg_backend_pid()),
      (SELECT min(prepared) FROM pg_prepared_xacts WHERE database = current_database()))), 0))`;

/**
 * What the alert rules (ops/alerts.yml) watch that no counter shows, read at scrape time in one
 * statement: each part an index probe or a scan of a small table (destinations, workers), never
 * of the callbacks backlog. (The count of open destinations is src/destinations' gauge; the
 * oldest due callback is the admission pass's, Metrics.noteOldestDue: walking the pending index
 * here would meet the dead entries a drain leaves, which admission skips by its floors.)
 */
const STATE = `
  SELECT (SELECT count(*) FROM delivery_workers WHERE expires_at > now())::int AS workers,
         (SELECT coalesce(extract(epoch FROM now() - min(opened_at)), 0) FROM destinations WHERE opened_at IS NOT NULL)::float8 AS open_longest,
         ${FEED_HELD}::float8 AS feed_held`;

interface DeliveryState {
  workers: number;
  open_longest: number;
  feed_held: number;
}

export function registerDeliveryGauges(registry: Registry, db: DataSource): void {
  // One read per scrape: prom-client collects the gauges together, and they share the read under way.
  let reading: Promise<DeliveryState> | null = null;
  const read = (): Promise<DeliveryState> =>
    (reading ??= db.query(STATE).then(
      (rows: DeliveryState[]) => {
        reading = null;
        return rows[0];
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
  gauge('funding_delivery_workers', 'Worker processes alive (announcing their delivery slots), all processes together', (s) => s.workers);
  gauge('funding_destination_circuit_open_longest_seconds', 'How long the circuit open the longest has been open (0: none open)', (s) => s.open_longest);
  gauge(
    'funding_callback_feed_held_seconds',
    "How long the callback feed's horizon has been held back: the age of the oldest transaction of this database holding a transaction id (0: none)",
    (s) => s.feed_held,
  );
}
