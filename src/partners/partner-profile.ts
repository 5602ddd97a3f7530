import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CallbackUrlValidator } from '../egress/index.js';
import { type Actor, AuditLog } from '../operators/index.js';
import { notFound, type SignatureScheme, TransactionRunner } from '../platform/index.js';
import { clientCertificateView, ClientCertificateView } from './client-certificates.service.js';

export interface PartnerView {
  id: string;
  name: string;
  signatureScheme: SignatureScheme;
  signingPublicKeys: string[];
  operationsUrl: string | null;
  clientCertificate: ClientCertificateView | null;
}

interface Row {
  id: string;
  name: string;
  signature_scheme: SignatureScheme;
  signing_public_key: string | null;
  previous_public_key: string | null;
  operations_url: string | null;
  /** The client certificate's, all null without one. */
  subject: string | null;
  issuer: string | null;
  not_after: Date | null;
  fingerprint256: string | null;
}

/** The previous key is listed while it still signs: by PostgreSQL's clock, as the delivery load decides it. */
const VIEW = `
  SELECT p.id, p.name, p.signature_scheme, p.signing_public_key,
         CASE WHEN p.previous_secret_expires_at > now() THEN p.previous_signing_public_key END AS previous_public_key,
         p.operations_url, cc.subject, cc.issuer, cc.not_after, cc.fingerprint256
    FROM partners p
    LEFT JOIN partner_client_certificates cc ON cc.partner_id = p.id
   WHERE p.id = $1`;

/** The partner as it sees itself (GET /v1/partner), and what it sets there itself (PATCH). */
@Injectable()
export class PartnerProfile {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly urls: CallbackUrlValidator,
    private readonly writes: TransactionRunner,
    private readonly audit: AuditLog,
  ) {}

  async view(partnerId: string): Promise<PartnerView> {
    const [r]: Row[] = await this.db.query(VIEW, [partnerId]);
    if (!r) throw notFound('Partner');
    return {
      id: r.id,
      name: r.name,
      signatureScheme: r.signature_scheme,
      signingPublicKeys: [r.signing_public_key, r.previous_public_key].filter((k): k is string => k !== null),
      operationsUrl: r.operations_url,
      clientCertificate:
        r.not_after === null
          ? null
          : clientCertificateView({
              subject: r.subject!,
              issuer: r.issuer!,
              not_after: r.not_after,
              fingerprint256: r.fingerprint256!,
            }),
    };
  }

  /**
   * Checked exactly as a callback URL is (400 naming operationsUrl); null removes it. Set by an
   * operator in the partner's portal (`actor`), audited naming the operator in the same
   * transaction: the URL's origin before and after, never its path or query (a token may be there).
   */
  async setOperationsUrl(partnerId: string, url: string | null, actor?: Actor): Promise<PartnerView> {
    const checked = await this.urls.check('operationsUrl', url);
    await this.writes.transaction(async (m) => {
      const [was]: { operations_url: string | null }[] = await m.query(
        'SELECT operations_url FROM partners WHERE id = $1 FOR UPDATE',
        [partnerId],
      );
      await m.query('UPDATE partners SET operations_url = $2 WHERE id = $1', [partnerId, checked]);
      if (!was || !actor) return;
      const before = { operationsOrigin: originOf(was.operations_url) };
      const after = { operationsOrigin: originOf(checked) };
      await this.audit.record(m, actor, { targetType: 'partner', targetId: partnerId, before, after });
    });
    return this.view(partnerId);
  }
}

/** A URL's origin (what an audit entry may hold of it), or null. */
const originOf = (url: string | null): string | null => (url === null ? null : new URL(url).origin);
