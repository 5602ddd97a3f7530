import { Gauge, Registry } from 'prom-client';
import { DataSource } from 'typeorm';

/**
 * How many client certificates have a series of their own: those expiring soonest (the alert's,
 * within 14 days, are among them unless more than this many expire that soon, when it fires all
 * the same), so ten thousand partners with a certificate each make 100 series, not 10,000.
 */
export const CLIENT_CERTIFICATE_SERIES = 100;

/**
 * When each partner's client certificate expires, as Unix seconds (the convention of certificate
 * expiry metrics: a fixed value the alert compares with `time()`), labelled with the partner's id,
 * for the certificates expiring soonest. Read at scrape time from the columns stored at upload,
 * no PEM parsed.
 */
export function registerClientCertificateGauge(registry: Registry, db: DataSource): void {
  new Gauge({
    name: 'funding_partner_client_certificate_expiry_timestamp_seconds',
    help:
      `When each partner's client certificate for mutual TLS expires (Unix seconds), by partner id: ` +
      `the ${CLIENT_CERTIFICATE_SERIES} expiring soonest`,
    labelNames: ['partner'] as const,
    registers: [registry],
    async collect() {
      const rows: { partner: string; expires: number }[] = await db.query(
        `SELECT partner_id::text AS partner, extract(epoch FROM not_after)::float8 AS expires
           FROM partner_client_certificates ORDER BY not_after LIMIT ${CLIENT_CERTIFICATE_SERIES}`,
      );
      this.reset();
      for (const r of rows) this.set({ partner: r.partner }, r.expires);
    },
  });
}
