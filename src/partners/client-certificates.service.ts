import { Injectable } from '@nestjs/common';
import { LockedRows, notFound, SecretBox, TransactionRunner } from '../platform/index.js';
import { type Actor, AuditLog, type Tracked } from '../operators/index.js';
import { checkClientCertificate, ClientCertificateUpload } from './client-certificate.js';
import { CertificateRow, ClientCertificateRepository } from './client-certificate.repository.js';
import { Partner } from './partner.entity.js';

/** What the partner sees of its certificate, and what the API answers an upload with. */
export interface ClientCertificateView {
  subject: string;
  issuer: string;
  notAfter: string;
  fingerprint256: string;
}

export const clientCertificateView = (
  r: Pick<CertificateRow, 'subject' | 'issuer' | 'not_after' | 'fingerprint256'>,
): ClientCertificateView => ({
  subject: r.subject,
  issuer: r.issuer,
  notAfter: r.not_after.toISOString(),
  fingerprint256: r.fingerprint256,
});

/** What an audit entry holds of a certificate: which one it is, never its key. */
const tracked = (r: CertificateRow | undefined): Record<string, Tracked> | null =>
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
    private readonly certificates: ClientCertificateRepository,
    private readonly rows: LockedRows,
  ) {}

  async set(actor: Actor, partnerId: string, upload: ClientCertificateUpload): Promise<ClientCertificateView> {
    return this.writes.transaction(async (m) => {
      await this.rows.lock(m, Partner, { id: partnerId }, 'Partner');
      const checked = checkClientCertificate(upload, new Date());
      const before = await this.certificates.current(m, partnerId);
      const after = await this.certificates.save(m, partnerId, {
        certificate: checked.certificate,
        privateKey: this.box.seal(checked.privateKey, 'partner_client_certificates.private_key', partnerId),
        serverCa: checked.serverCa,
        subject: checked.info.subject,
        issuer: checked.info.issuer,
        notAfter: checked.info.notAfter,
        fingerprint256: checked.info.fingerprint256,
      });
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
      await this.rows.lock(m, Partner, { id: partnerId }, 'Partner');
      const removed = await this.certificates.remove(m, partnerId);
      if (!removed) throw notFound('Client certificate');
      await this.audit.record(m, actor, {
        targetType: 'partner',
        targetId: partnerId,
        before: { clientCertificate: tracked(removed) },
        after: { clientCertificate: null },
      });
    });
  }
}
