import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import {
  DomainError,
  ErrorCode,
  LockedRows,
  newSigningKey,
  SecretBox,
  ShownKey,
  SignatureScheme,
  TransactionRunner,
} from '../platform/index.js';
import { type Actor, AuditLog } from '../operators/index.js';
import { Partner } from './partner.entity.js';

/**
 * How long callbacks stay signed with the replaced key too after a rotation or a switch of scheme
 * (docs/partners.md, "Credentials and conventions" and "Switching to v1a without a gap").
 */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

/** A partner acts on its own key only: a call for another's is a fault of the caller, never a request to honour. */
function ownKeyOnly(actor: Actor, partnerId: string): void {
  if ('partner' in actor && actor.partner.id !== partnerId)
    throw new Error(`partner ${actor.partner.id} cannot change partner ${partnerId}'s key`);
}

/**
 * The one owner of a partner's key changes: the operators' routes (/admin/v1/partners/…) and the
 * partner's own (/v1/partner/…) call it, each with its actor for the audit entry.
 * A partner's signing key replaced: by a new one of its scheme (a rotation) or of the other
 * scheme (a switch). Either way the replaced key keeps signing beside the new one for
 * {@link ROTATION_OVERLAP_MS}, so the receiver changes its verifier without a gap; a key replaced
 * by an earlier change still in its overlap stops at once (one previous key at a time, as for
 * API keys). The audit entry says that it happened and until when the old key signs, never a key.
 */
@Injectable()
export class PartnerSigning {
  constructor(
    private readonly writes: TransactionRunner,
    private readonly box: SecretBox,
    private readonly audit: AuditLog,
    private readonly rows: LockedRows,
  ) {}

  /**
   * `{signingSecret}` under `hmac-sha256`, `{signingPublicKey}` under `ed25519`. `shownAt`: when the
   * page asking for it showed the key (the portal's form): a key changed since is not replaced again
   * (409), so a form sent twice cannot end at once the key the receiver still verifies with.
   */
  async rotate(actor: Actor, partnerId: string, shownAt?: Date): Promise<ShownKey> {
    ownKeyOnly(actor, partnerId);
    return this.writes.transaction(async (m) => {
      const partner = await this.rows.lock(m, Partner, { id: partnerId }, 'Partner');
      const replaced = partner.previousSecretExpiresAt;
      const changedAt = replaced && replaced.getTime() - ROTATION_OVERLAP_MS;
      if (shownAt && changedAt && changedAt > shownAt.getTime()) {
        const why = 'Your signing key was changed after this page showed it: nothing was changed. Open Settings again.';
        throw new DomainError('conflict', ErrorCode.concurrent_changes, why);
      }
      const before = partner.previousSecretExpiresAt?.toISOString() ?? null;
      const shown = await this.replaceKey(m, partner, partner.signatureScheme);
      await this.audit.record(m, actor, {
        targetType: 'partner',
        targetId: partnerId,
        before: { signingSecretRotated: false, previousSecretExpiresAt: before },
        after: { signingSecretRotated: true, previousSecretExpiresAt: partner.previousSecretExpiresAt!.toISOString() },
      });
      return shown;
    });
  }

  /** `409` when the partner signs with `scheme` already: a new key of the same scheme is a rotation. */
  async switchScheme(
    actor: Actor,
    partnerId: string,
    scheme: SignatureScheme,
  ): Promise<{ signatureScheme: SignatureScheme } & ShownKey> {
    ownKeyOnly(actor, partnerId);
    return this.writes.transaction(async (m) => {
      const partner = await this.rows.lock(m, Partner, { id: partnerId }, 'Partner');
      const was = partner.signatureScheme;
      if (was === scheme) {
        throw new DomainError(
          'conflict',
          ErrorCode.signature_scheme_unchanged,
          `the partner signs with ${was} already; rotate-signing-secret gives it a new key`,
        );
      }
      const before = partner.previousSecretExpiresAt?.toISOString() ?? null;
      const shown = await this.replaceKey(m, partner, scheme);
      await this.audit.record(m, actor, {
        targetType: 'partner',
        targetId: partnerId,
        before: { signatureScheme: was, previousSecretExpiresAt: before },
        after: { signatureScheme: scheme, previousSecretExpiresAt: partner.previousSecretExpiresAt!.toISOString() },
      });
      return { signatureScheme: scheme, ...shown };
    });
  }

  /** The current key becomes the previous one (moved still sealed, never opened); a new key of `scheme` replaces it. */
  private async replaceKey(m: EntityManager, partner: Partner, scheme: SignatureScheme): Promise<ShownKey> {
    const key = newSigningKey(scheme);
    partner.previousSigningSecret = partner.signingSecret;
    partner.previousSigningPublicKey = partner.signingPublicKey;
    partner.previousSecretExpiresAt = new Date(Date.now() + ROTATION_OVERLAP_MS);
    partner.signatureScheme = scheme;
    partner.signingSecret = this.box.seal(key.stored, 'partners.signing_secret', partner.id);
    partner.signingPublicKey = key.publicKey;
    await this.rows.writeBack(m, Partner, partner);
    return key.shown;
  }
}
