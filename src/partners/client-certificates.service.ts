import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { lockOrNotFound, notFound, SecretBox, TransactionRunner } from '../platform/index.js';
import { type Actor, AuditLog, type Tracked } from '../operators/index.js';
import { checkClientCertificate, ClientCertificateUpload } from './client-certificate.js';
import { Partner } from './partner.entity.js';

/** What the partner sees of its certificate, and what the API answers an upload with. */
export interface ClientCertificateView {
  subject: string;
  issuer: string;
  notAfter: string;
  fingerprint256: string;
}

interface Row {
  subject: string;
  issuer: string;
  not_after: Date;
  fingerprint256: string;
  has_server_ca: boolean;
}

export const CLIENT_CERTIFICATE_VIEW = `subject, issuer, not_after, fingerprint256,
  server_ca IS NOT NULL AS has_server_ca`;

export const clientCertificateView = (
  r: Pick<Row, 'subject' | 'issuer' | 'not_after' | 'fingerprint256'>,
): ClientCertificateView => ({
  subject: r.subject,
  issuer: r.issuer,
  notAfter: r.not_after.toISOString(),
  fingerprint256: r.fingerprint256,
});

/** What an audit entry holds of a certificate: which one it is, never its key. */
const tracked = (r: Row | undefined): Record<string, Tracked> | null =>
  r ? { ...clientCertificateView(r), serverCa: r.has_server_ca } : null;

/**
 * A partner's client certificate set (checked, its key sealed) or removed by an admin, each in one
 * transaction with its audit entry. Every upload gets a new id, so workers pool connections made
 * with it apart from those of the certificate it replaced.
 */
@Injectable()
export class ClientCertificates {
  constructor(
    private readonly writes: TransactionRunner,
    private readonly box: SecretBox,
    private readonly audit: AuditLog,
  ) {}

  async set(actor: Actor, partnerId: string, upload: ClientCertificateUpload): Promise<ClientCertificateView> {
    return this.writes.transaction(async (m) => {
      await lockOrNotFound(m, Partner, { id: partnerId }, 'Partner');
      const checked = checkClientCertificate(upload, new Date());
      const before = await this.current(m, partnerId);
      const [after]: Row[] = await m.query(
        `INSERT INTO partner_client_certificates
           (partner_id, certificate, private_key, server_ca, subject, issuer, not_after, fingerprint256)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (partner_id) DO UPDATE
           SET id = gen_random_uuid(), certificate = $2, private_key = $3, server_ca = $4,
           subject = $5, issuer = $6, not_after = $7, fingerprint256 = $8, uploaded_at = now()
         RETURNING ${CLIENT_CERTIFICATE_VIEW}`,
        [
          partnerId,
          checked.certificate,
          this.box.seal(checked.privateKey, 'partner_client_certificates.private_key', partnerId),
          checked.serverCa,
          checked.info.subject,
          checked.info.issuer,
          checked.info.notAfter,
          checked.info.fingerprint256,
        ],
      );
      await this.audit.record(m, actor, {
        targetType: 'partner',
        targetId: partnerId,
        before: { clientCertificate: tracked(before) },
        after: { clientCertificate: tracked(after) },
      });
      return clientCertificateView(after);
    });
  }

  /** 404 when the partner has none: nothing to remove. */
  async remove(actor: Actor, partnerId: string): Promise<void> {
    await this.writes.transaction(async (m) => {
      await lockOrNotFound(m, Partner, { id: partnerId }, 'Partner');
      // TypeORM answers a DELETE with [rows, count].
      const [[removed]]: [Row[], number] = await m.query(
        `DELETE FROM partner_client_certificates WHERE partner_id = $1 RETURNING ${CLIENT_CERTIFICATE_VIEW}`,
        [partnerId],
      );
      if (!removed) throw notFound('Client certificate');
      await this.audit.record(m, actor, {
        targetType: 'partner',
        targetId: partnerId,
        before: { clientCertificate: tracked(removed) },
        after: { clientCertificate: null },
      });
    });
  }

  private async current(m: EntityManager, partnerId: string): Promise<Row | undefined> {
    const [row]: Row[] = await m.query(
      `SELECT ${CLIENT_CERTIFICATE_VIEW} FROM partner_client_certificates WHERE partner_id = $1`,
      [partnerId],
    );
    return row;
  }
}
