import { Injectable } from '@nestjs/common';
import { CallbackUrlValidator } from '../egress/index.js';
import { type Actor, AuditLog } from '../operators/index.js';
import { notFound, type SignatureScheme, TransactionRunner } from '../platform/index.js';
import { clientCertificateView, ClientCertificateView } from './client-certificates.service.js';
import { PartnerRepository } from './partner.repository.js';

export interface PartnerView {
  id: string;
  name: string;
  signatureScheme: SignatureScheme;
  signingPublicKeys: string[];
  operationsUrl: string | null;
  clientCertificate: ClientCertificateView | null;
}

/** The partner as it sees itself (GET /v1/partner), and what it sets there itself (PATCH). */
@Injectable()
export class PartnerProfile {
  constructor(
    private readonly partners: PartnerRepository,
    private readonly urls: CallbackUrlValidator,
    private readonly writes: TransactionRunner,
    private readonly audit: AuditLog,
  ) {}

  async view(partnerId: string): Promise<PartnerView> {
    const r = await this.partners.profile(partnerId);
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
      const was = await this.partners.lockOperationsUrl(m, partnerId);
      await this.partners.setOperationsUrl(m, partnerId, checked);
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
