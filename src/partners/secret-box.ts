// Secrets at rest (SECRETS_KEY: docs/configuration.md; rotation: docs/operations.md): signing keys, client certificates' keys, and idempotent responses that carry
// once-shown credentials, are stored sealed with AES-256-GCM under a key from the environment.
// SECRETS_KEY is a list, newest first: the newest seals, every listed key opens, so a key is
// rotated by listing the new one first, restarting (which re-seals, see SecretsReencryption),
// and then dropping the old one.
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

/** What a sealed value is for: authenticated with it, so a value cannot be moved to another column. */
export type SealContext = 'partners.signing_secret' | 'partners.client_key' | 'idempotency_keys.response';

const PREFIX = 'enc1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Decrypted values kept in memory: the delivery hot path opens the same few partner secrets over and over. */
const CACHE_LIMIT = 10_000;

interface RingKey {
  id: string;
  key: Buffer;
}

/** A short public id of a key, stored beside each value so the right key opens it. */
export function keyId(secretsKey: string): string {
  return createHash('sha256').update(`funding-service key id:${secretsKey}`).digest('hex').slice(0, 8);
}

export class SecretBox {
  private readonly ring: RingKey[];
  private readonly cache = new Map<string, string>();

  constructor(secretsKeys: string[]) {
    if (secretsKeys.length === 0) throw new Error('SecretBox needs at least one key');
    // SECRETS_KEY is a passphrase-like string of at least 32 characters; HKDF turns it into exactly 256 bits.
    this.ring = secretsKeys.map((k) => ({
      id: keyId(k),
      key: Buffer.from(hkdfSync('sha256', Buffer.from(k, 'utf8'), Buffer.alloc(0), 'funding-service secrets at rest v1', 32)),
    }));
  }

  /** `enc1:<key id>:<base64url(iv | tag | ciphertext)>`: plain ASCII, so storing it cannot fail. */
  seal(plain: string, context: SealContext): string {
    const { id, key } = this.ring[0];
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${PREFIX}:${id}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  /**
   * The plain value. A value that is not sealed (written before secrets were encrypted, and not
   * yet re-sealed at start) is returned as it is.
   */
  open(stored: string, context: SealContext): string {
    if (!isSealed(stored)) return stored;
    const cacheKey = `${context}|${stored}`;
    const hit = this.cache.get(cacheKey);
    if (hit !== undefined) return hit;
    const [, id, data] = stored.split(':');
    const ringKey = this.ring.find((k) => k.id === id);
    // The key id is public; naming it tells the operator which SECRETS_KEY entry is missing.
    if (!ringKey) throw new Error(`a secret is sealed with key ${id}, which SECRETS_KEY does not list`);
    const raw = Buffer.from(data, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', ringKey.key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    const plain = Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(cacheKey, plain);
    return plain;
  }

  /** Sealed with the newest key: nothing to re-seal. */
  isCurrent(stored: string): boolean {
    return stored.startsWith(`${PREFIX}:${this.ring[0].id}:`);
  }

  /** The SQL LIKE pattern of values sealed with the newest key. */
  currentPattern(): string {
    return `${PREFIX}:${this.ring[0].id}:%`;
  }
}

export function isSealed(stored: string): boolean {
  return /^enc1:[0-9a-f]{8}:[A-Za-z0-9_-]+$/.test(stored);
}
