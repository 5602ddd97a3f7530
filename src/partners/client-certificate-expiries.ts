import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** A partner's client certificate's expiry (Unix seconds), by partner id. */
export type CertificateExpiry = { partner: string; expires: number };

export const CERTIFICATE_EXPIRIES = `SELECT partner_id::text AS partner, extract(epoch FROM not_after)::float8 AS expires FROM partner_client_certificates`;

/**
 * When each partner's client certificate expires, from the columns stored at upload: a scan of one
 * row per partner with a certificate, no PEM parsed (the metrics' gauge reads it at scrape time).
 */
@Injectable()
export class ClientCertificateExpiries {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  all(): Promise<CertificateExpiry[]> {
    return this.db.query(CERTIFICATE_EXPIRIES);
  }
}
