import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** A partner's client certificate's expiry (Unix seconds), by partner id. */
export type CertificateExpiry = { partner: string; expires: number };

export const CERTIFICATE_EXPIRIES = `SELECT partner_id::text AS partner,
  extract(epoch FROM not_after)::float8 AS expires
  FROM partner_client_certificates ORDER BY not_after LIMIT $1`;

/**
 * When partners' client certificates expire, from the columns stored at upload, no PEM parsed
 * (the metrics' gauge reads it at scrape time).
 */
@Injectable()
export class ClientCertificateExpiries {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The `limit` certificates expiring soonest. */
  soonest(limit: number): Promise<CertificateExpiry[]> {
    return this.db.query(CERTIFICATE_EXPIRIES, [limit]);
  }
}
