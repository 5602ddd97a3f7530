import { Lru, SealBroken, SecretBox, Signer, signerFor } from '../platform/index.js';

/**
 * Prepared signers kept, the least recently used dropped first: busy partners' stay, and ten
 * thousand partners cost no more than a thousand.
 */
const CACHE_LIMIT = 1_000;

/**
 * The signers of partners' stored (sealed) keys, each opened and prepared once (an Ed25519 key
 * object, an HMAC key's bytes) and kept by its partner and sealed value: a key replaced by a
 * rotation or a switch has another sealed value, so nothing kept can go stale, and a sealed value
 * copied to another partner's row is opened (and refused) there, never taken from the cache.
 * Opening throws for a key sealed with a SECRETS_KEY this process lacks, or for another row.
 */
export class SigningKeyCache {
  private readonly signers = new Lru<string, Signer>(CACHE_LIMIT);

  constructor(private readonly box: SecretBox) {}

  /**
   * The signers for a partner's current key and, while it is honoured, its previous one. A previous
   * key that does not open for this partner (the current one was a copy when it was replaced) is
   * left out: a rotation repairs a copied key at once.
   */
  signersOf(partnerId: string, sealed: string, previousSealed: string | null): Signer[] {
    const current = this.signer(partnerId, sealed);
    if (previousSealed === null) return [current];
    try {
      return [current, this.signer(partnerId, previousSealed)];
    } catch (e) {
      if (e instanceof SealBroken) return [current];
      throw e;
    }
  }

  private signer(partnerId: string, sealed: string): Signer {
    const kept = `${partnerId}|${sealed}`;
    const known = this.signers.get(kept);
    if (known) return known;
    const signer = signerFor(this.box.open(sealed, 'partners.signing_secret', partnerId));
    this.signers.set(kept, signer);
    return signer;
  }
}
