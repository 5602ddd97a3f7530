import { Inject, Injectable, Optional } from '@nestjs/common';
import { type Actor, AuditLog, CREDENTIAL_CLOCK, CredentialCache, MonotonicClock } from '../operators/index.js';
import { randomUUID } from 'node:crypto';
import {
  hashToken,
  LockedRows,
  newApiKey,
  newSigningKey,
  safeEqual,
  SecretBox,
  SignatureScheme,
  TransactionRunner,
} from '../platform/index.js';
import { Partner } from './partner.entity.js';
import { PartnerRepository } from './partner.repository.js';
import { PortalLinks } from './portal-links.js';

/**
 * How long a process trusts a key it verified as a partner's current key, without reading the
 * partner again: a rotation without overlap (or by another process) holds within a second
 * everywhere; the rotating process forgets the replaced key at once.
 */
export const PARTNER_KEY_CACHE_MS = 500;
/** Keys remembered at most; beyond, the cache starts again (a request costs one read). */
const KEY_CACHE_LIMIT = 10_000;

@Injectable()
export class PartnersService {
  /** Verified current keys, by their hash (never the key itself). */
  private readonly verified: CredentialCache<Partner>;

  constructor(
    private readonly writes: TransactionRunner,
    private readonly box: SecretBox,
    private readonly audit: AuditLog,
    private readonly portalLinks: PortalLinks,
    private readonly partners: PartnerRepository,
    private readonly rows: LockedRows,
    @Optional() @Inject(CREDENTIAL_CLOCK) clock?: MonotonicClock,
  ) {
    this.verified = new CredentialCache(PARTNER_KEY_CACHE_MS, KEY_CACHE_LIMIT, clock);
  }

  /**
   * The API key is stored as its hash only, the signing key sealed: the API key and the signing
   * secret (or, under `ed25519`, the public key: the private key is never shown) are shown this once.
   */
  async create(actor: Actor, name: string, signatureScheme: SignatureScheme) {
    const apiKey = newApiKey();
    const key = newSigningKey(signatureScheme);
    // Chosen here, not by PostgreSQL: the signing key is sealed for its row.
    const id = randomUUID();
    const partner = await this.writes.transaction(async (m) => {
      const saved = await this.partners.insert(m, {
        id,
        name,
        apiKeyHash: hashToken(apiKey),
        signatureScheme,
        signingSecret: this.box.seal(key.stored, 'partners.signing_secret', id),
        signingPublicKey: key.publicKey,
        previousSigningSecret: null,
        previousSigningPublicKey: null,
        previousSecretExpiresAt: null,
        previousApiKeyHash: null,
        previousKeyExpiresAt: null,
        apiKeyRotatedAt: null,
        operationsUrl: null,
      });
      await this.audit.record(m, actor, {
        targetType: 'partner',
        targetId: saved.id,
        before: {},
        after: { name, signatureScheme },
      });
      return saved;
    });
    return { id: partner.id, name: partner.name, apiKey, ...key.shown, createdAt: partner.createdAt };
  }

  /**
   * A new API key (shown once); the current one keeps working for `previousKeyValidHours` (0: not
   * at all; then the partner's portal sessions and unused links end too). A key replaced by an
   * earlier rotation stops at once: one previous key at a time.
   */
  async rotateApiKey(actor: Actor, partnerId: string, previousKeyValidHours: number) {
    const { replaced, ...rotated } = await this.writes.transaction(async (m) => {
      const partner = await this.rows.lock(m, Partner, { id: partnerId }, 'Partner');
      const replaced = partner.apiKeyHash;
      const apiKey = newApiKey();
      const before = partner.previousKeyExpiresAt?.toISOString() ?? null;
      // PostgreSQL's clock, as the authentication's comparison uses.
      const now = await this.partners.now(m);
      const expiresAt = new Date(now.getTime() + previousKeyValidHours * 3600 * 1000);
      partner.previousApiKeyHash = previousKeyValidHours > 0 ? partner.apiKeyHash : null;
      partner.previousKeyExpiresAt = expiresAt;
      partner.apiKeyRotatedAt = now;
      partner.apiKeyHash = hashToken(apiKey);
      await this.rows.writeBack(m, Partner, partner);
      // A key that stops at once (a leak) ends the portal sessions too, and every link made with it and not yet used.
      if (previousKeyValidHours === 0) await this.portalLinks.endAll(m, partnerId);
      await this.audit.record(m, actor, {
        targetType: 'partner',
        targetId: partnerId,
        before: { apiKeyRotated: false, previousKeyExpiresAt: before },
        after: { apiKeyRotated: true, previousKeyExpiresAt: expiresAt.toISOString() },
      });
      return { replaced, apiKey, previousKeyExpiresAt: expiresAt.toISOString() };
    });
    // This process trusts the replaced key no longer at once; every other within PARTNER_KEY_CACHE_MS.
    this.verified.forget(replaced);
    return rotated;
  }

  /**
   * The partner owning this API key: its current key, or the key its last rotation replaced until
   * that one expires (PostgreSQL's clock decides, the same for every process). Two unique-index
   * lookups (a BitmapOr); a current key's answer is kept for {@link PARTNER_KEY_CACHE_MS}, by the
   * key's hash. A replaced key's is not kept: its overlap ends by PostgreSQL's clock, exactly.
   */
  async authenticate(apiKey: string): Promise<Partner | null> {
    const hash = hashToken(apiKey);
    const lookup = this.verified.begin();
    const cached = this.verified.trusted(hash, lookup);
    if (cached) return cached;
    const partner = await this.partners.byApiKeyHash(hash);
    if (!partner) return null;
    if (safeEqual(partner.apiKeyHash, hash)) {
      // Only keys that verified are remembered: a stranger's guesses would only fill the cache.
      this.verified.keep(lookup, hash, partner);
      return partner;
    }
    return partner.previousApiKeyHash !== null && safeEqual(partner.previousApiKeyHash, hash) ? partner : null;
  }
}
