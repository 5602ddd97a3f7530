import type { DataSource } from 'typeorm';
import { DeliveryCounts } from '../../src/callbacks/store/counts.js';
import { DestinationSummaries } from '../../src/callbacks/store/destination-summaries.js';
import { Metrics } from '../../src/operations/metrics.js';
import { ClientCertificateExpiries } from '../../src/partners/client-certificate-expiries.js';
import { ClientCertificateRepository } from '../../src/partners/client-certificate.repository.js';
import type { SqlPool } from '../../src/platform/index.js';
import type { TestApp } from './harness.js';

/**
 * One series' value in the service's /metrics (`name` or `name{label="value"}`, as exposed);
 * undefined when it exports no such series, as for a labelled counter never incremented yet: the
 * caller says whether that counts as 0.
 */
export async function metric(t: TestApp, series: string): Promise<number | undefined> {
  const text = (await t.http().get('/metrics').expect(200)).text;
  const m = new RegExp(`^${series.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

/** Metrics over these connections, its gauges reading through the repositories Nest would inject. */
export const metricsOn = (db: DataSource, sql: SqlPool): Metrics =>
  new Metrics(
    new DeliveryCounts(db, sql),
    new DestinationSummaries(db),
    new ClientCertificateExpiries(new ClientCertificateRepository(db)),
  );
