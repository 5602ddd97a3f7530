import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { lockOrNotFound, writeBack } from '../common/transaction.js';
import { Partner } from './partner.entity.js';
import { hashToken, newApiKey, newSigningSecret, safeEqual } from './partner-secrets.js';

/** How long callbacks stay signed with the old secret too after a rotation (API.md §2). */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

@Injectable()
export class PartnersService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async create(name: string) {
    const apiKey = newApiKey();
    const partner = await this.db.getRepository(Partner).save({
      name,
      apiKeyHash: hashToken(apiKey),
      signingSecret: newSigningSecret(),
      previousSigningSecret: null,
      previousSecretExpiresAt: null,
    });
    return { id: partner.id, name: partner.name, apiKey, signingSecret: partner.signingSecret, createdAt: partner.createdAt };
  }

  async rotateSigningSecret(partnerId: string) {
    return this.db.transaction(async (m) => {
      const partner = await lockOrNotFound(m, Partner, { id: partnerId }, 'Partner');
      partner.previousSigningSecret = partner.signingSecret;
      partner.previousSecretExpiresAt = new Date(Date.now() + ROTATION_OVERLAP_MS);
      partner.signingSecret = newSigningSecret();
      await writeBack(m, Partner, partner);
      return { signingSecret: partner.signingSecret };
    });
  }

  /** The partner owning this API key, or null. */
  async authenticate(apiKey: string): Promise<Partner | null> {
    const hash = hashToken(apiKey);
    const partner = await this.db.getRepository(Partner).findOne({ where: { apiKeyHash: hash } });
    return partner && safeEqual(partner.apiKeyHash, hash) ? partner : null;
  }
}
