import { Gauge, Registry } from 'prom-client';
import type { ClientCertificateExpiries } from '../partners/index.js';

/**
 * When each partner's client certificate expires, as Unix seconds (the convention of certificate
 * expiry metrics: a fixed value the alert compares with `time()`), labelled with the partner's id.
 * Read at scrape time from the columns stored at upload: a scan of one row per partner with a
 * certificate, no PEM parsed.
 */
export function registerClientCertificateGauge(registry: Registry, expiries: ClientCertificateExpiries): void {
  new Gauge({
    name: 'funding_partner_client_certificate_expiry_timestamp_seconds',
    help: "When each partner's client certificate for mutual TLS expires (Unix seconds), by partner id",
    labelNames: ['partner'] as const,
    registers: [registry],
    async collect() {
      const rows = await expiries.all();
      this.reset();
      for (const r of rows) this.set({ partner: r.partner }, r.expires);
    },
  });
}
