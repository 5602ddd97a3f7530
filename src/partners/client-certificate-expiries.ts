import { Injectable } from '@nestjs/common';
import { CertificateExpiry, ClientCertificateRepository } from './client-certificate.repository.js';

export type { CertificateExpiry };

/**
 * When partners' client certificates expire, from the columns stored at upload, no PEM parsed
 * (the metrics' gauge reads it at scrape time).
 */
@Injectable()
export class ClientCertificateExpiries {
  constructor(private readonly certificates: ClientCertificateRepository) {}

  /** The `limit` certificates expiring soonest. */
  soonest(limit: number): Promise<CertificateExpiry[]> {
    return this.certificates.soonest(limit);
  }
}
