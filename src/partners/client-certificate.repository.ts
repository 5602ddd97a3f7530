import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';

/** A certificate as the API shows it, and whether a server CA came with it. */
export interface CertificateRow {
  subject: string;
  issuer: string;
  not_after: Date;
  fingerprint256: string;
  has_server_ca: boolean;
}

/** A certificate as workers present it, its key sealed. */
export interface TlsRow {
  id: string;
  partner_id: string;
  certificate: string;
  private_key: string;
  server_ca: string | null;
}

/** A partner's client certificate's expiry (Unix seconds), by partner id. */
export type CertificateExpiry = { partner: string; expires: number };

/** A checked upload, its key sealed, as it is stored. */
export interface StoredCertificate {
  certificate: string;
  privateKey: string;
  serverCa: string | null;
  subject: string;
  issuer: string;
  notAfter: Date;
  fingerprint256: string;
}

const CLIENT_CERTIFICATE_VIEW = `subject, issuer, not_after, fingerprint256,
  server_ca IS NOT NULL AS has_server_ca`;

export const CERTIFICATE_EXPIRIES = `SELECT partner_id::text AS partner,
  extract(epoch FROM not_after)::float8 AS expires
  FROM partner_client_certificates ORDER BY not_after LIMIT $1`;

/** The statements of partner_client_certificates, one method each. */
@Injectable()
export class ClientCertificateRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Sets the partner's certificate; every upload gets a new id. */
  async save(m: EntityManager, partnerId: string, c: StoredCertificate): Promise<CertificateRow> {
    const [after]: CertificateRow[] = await m.query(
      `INSERT INTO partner_client_certificates
           (partner_id, certificate, private_key, server_ca, subject, issuer, not_after, fingerprint256)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (partner_id) DO UPDATE
           SET id = gen_random_uuid(), certificate = $2, private_key = $3, server_ca = $4,
           subject = $5, issuer = $6, not_after = $7, fingerprint256 = $8, uploaded_at = now()
         RETURNING ${CLIENT_CERTIFICATE_VIEW}`,
      [partnerId, c.certificate, c.privateKey, c.serverCa, c.subject, c.issuer, c.notAfter, c.fingerprint256],
    );
    return after;
  }

  /** The removed certificate; undefined when the partner had none. */
  async remove(m: EntityManager, partnerId: string): Promise<CertificateRow | undefined> {
    // TypeORM answers a DELETE with [rows, count].
    const [[removed]]: [CertificateRow[], number] = await m.query(
      `DELETE FROM partner_client_certificates WHERE partner_id = $1 RETURNING ${CLIENT_CERTIFICATE_VIEW}`,
      [partnerId],
    );
    return removed;
  }

  async current(m: EntityManager, partnerId: string): Promise<CertificateRow | undefined> {
    const [row]: CertificateRow[] = await m.query(
      `SELECT ${CLIENT_CERTIFICATE_VIEW} FROM partner_client_certificates WHERE partner_id = $1`,
      [partnerId],
    );
    return row;
  }

  /** The `limit` certificates expiring soonest, from the columns stored at upload. */
  soonest(limit: number): Promise<CertificateExpiry[]> {
    return this.db.query(CERTIFICATE_EXPIRIES, [limit]);
  }

  /** An upload by its id, for a worker's connection. */
  async forTls(id: string): Promise<TlsRow | undefined> {
    const [r]: TlsRow[] = await this.db.query(
      'SELECT id, partner_id, certificate, private_key, server_ca FROM partner_client_certificates WHERE id = $1',
      [id],
    );
    return r;
  }
}
