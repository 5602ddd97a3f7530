import { Injectable } from '@nestjs/common';
import type { ClientTls } from '../egress/index.js';
import { Lru, SecretBox } from '../platform/index.js';
import { ClientCertificateRepository } from './client-certificate.repository.js';

/**
 * Uploads kept in memory, the least recently used dropped first: a worker sends for the same
 * partners' certificates over and over.
 */
const CACHE_LIMIT = 1_000;

/**
 * The client certificates workers present, by upload id (the delivery load gives the id alone):
 * read and opened once per upload. An upload never changes (a new one has a new id), so nothing
 * kept can go stale; one removed since the load is null (the callback goes without, as the
 * partner's state now says).
 */
@Injectable()
export class ClientTlsStore {
  private readonly kept = new Lru<string, Promise<ClientTls | null>>(CACHE_LIMIT);

  constructor(
    private readonly certificates: ClientCertificateRepository,
    private readonly box: SecretBox,
  ) {}

  /**
   * Throws when PostgreSQL cannot answer or the key cannot be opened (its SECRETS_KEY entry missing);
   * nothing is kept then.
   */
  get(id: string): Promise<ClientTls | null> {
    const known = this.kept.get(id);
    if (known) return known;
    const loading = this.load(id);
    this.kept.set(id, loading);
    loading.catch(() => this.kept.delete(id));
    return loading;
  }

  private async load(id: string): Promise<ClientTls | null> {
    const r = await this.certificates.forTls(id);
    if (!r) return null;
    return {
      id: r.id,
      partnerId: r.partner_id,
      certificate: r.certificate,
      key: this.box.open(r.private_key, 'partner_client_certificates.private_key', r.partner_id),
      serverCa: r.server_ca,
    };
  }
}
