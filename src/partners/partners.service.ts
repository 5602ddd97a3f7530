import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { lockOrNotFound, writeBack } from '../common/transaction.js';
import { Partner } from './partner.entity.js';
import { hashToken, newApiKey, newSigningSecret, safeEqual } from './partner-secrets.js';
import { SecretBox } from './secret-box.js';

/** How long callbacks stay signed with the old secret too after a rotation (docs/partners.md, "Credentials and conventions"). */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

@Injectable()
export class PartnersService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly box: SecretBox,
  ) {}

  /** The API key is stored as its hash only, the signing secret sealed: both are shown this once. */
  async create(name: string) {
    const apiKey = newApiKey();
    const signingSecret = newSigningSecret();
    const partner = await this.db.getRepository(Partner).save({
      name,
      apiKeyHash: hashToken(apiKey),
      signingSecret: this.box.seal(signingSecret, 'partners.signing_secret'),
      previousSigningSecret: null,
      previousSecretExpiresAt: null,
    });
    return { id: partner.id, name: partner.name, apiKey, signingSecret, createdAt: partner.createdAt };
  }

  async rotateSigningSecret(partnerId: string) {
    return this.db.transaction(async (m) => {
      const partner = await lockOrNotFound(m, Partner, { id: partnerId }, 'Partner');
      const signingSecret = newSigningSecret();
      partner.previousSigningSecret = partner.signingSecret; // still sealed: moved, never opened
      partner.previousSecretExpiresAt = new Date(Date.now() + ROTATION_OVERLAP_MS);
      partner.signingSecret = this.box.seal(signingSecret, 'partners.signing_secret');
      await writeBack(m, Partner, partner);
      return { signingSecret };
    });
  }

  /** The partner owning this API key, or null. */
  async authenticate(apiKey: string): Promise<Partner | null> {
    const hash = hashToken(apiKey);
    const partner = await this.db.getRepository(Partner).findOne({ where: { apiKeyHash: hash } });
    return partner && safeEqual(partner.apiKeyHash, hash) ? partner : null;
  }
}
