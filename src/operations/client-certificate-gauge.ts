import { Gauge, Registry } from 'prom-client';
import { DataSource } from 'typeorm';

/**
 * When each partner's client certificate expires, as Unix seconds (the convention of certificate
 * expiry metrics: a fixed value the alert compares with `time()`), labelled with the partner's id.
 * Read at scrape time from the columns stored at upload: a scan of one row per partner with a
 * certificate, no PEM parsed.
 */
export function registerClientCertificateGauge(registry: Registry, db: DataSource): void {
  new Gauge({
    name: 'funding_partner_client_certificate_expiry_timestamp_seconds',
    help: "When each partner's client certificate for mutual TLS expires (Unix seconds), by partner id",
    labelNames: ['partner'] as const,
    registers: [registry],
    async collect() {
      const rows: { partner: string; expires: number }[] = await db.query(
        `SELECT partner_id::text AS partner, extract(epoch FROM not_after)::float8 AS expires FROM partner_client_certificates`,
      );
      this.reset();
      for (const r of rows) this.set({ partner: r.partner }, r.expires);
    },
  });
}
