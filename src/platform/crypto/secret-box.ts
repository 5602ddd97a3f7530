// Secrets at rest (SECRETS_KEY: docs/configuration.md; rotation: docs/operations.md): signing keys,
// client certificates' keys, and idempotent responses that carry once-shown credentials, are stored
// sealed with AES-256-GCM under a key from the environment.
// SECRETS_KEY is a list, newest first: the newest seals, every listed key opens, so a key is
// rotated by listing the new one first, restarting (which re-seals, see SecretsReencryption),
// and then dropping the old one.
import { Lru } from '../common/lru.js';
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

/**
 * The columns sealed values are stored in, as `table.column`, each with the SQL of its row's id
 * (what a value is bound to besides its column). A partner's previous signing key is its current
 * key moved, still sealed: both columns are `partners.signing_secret`.
 */
export const SEALED_COLUMNS = {
  'partners.signing_secret': {
    table: 'partners',
    columns: ['signing_secret', 'previous_signing_secret'],
    row: `id::text`,
    key: ['id'],
  },
  'partner_client_certificates.private_key': {
    table: 'partner_client_certificates',
    columns: ['private_key'],
    row: `partner_id::text`,
    key: ['partner_id'],
  },
  'idempotency_keys.response': {
    table: 'idempotency_keys',
    columns: ['response'],
    row: `scope || ' ' || key`,
    key: ['scope', 'key'],
  },
} as const;

/** Where a sealed value is stored: authenticated with its row (AES-GCM's associated data), so it opens nowhere else. */
export type SealColumn = keyof typeof SEALED_COLUMNS;

/** An idempotent response's row id, as SEALED_COLUMNS' SQL writes it (a scope has no space). */
export const idempotencyRow = (scope: string, key: string) => `${scope} ${key}`;

/** Bound to the table, column and row (`enc2`). */
const PREFIX = 'enc2';
/** Bound to the column only, as values were sealed before: opened by the migration that reseals them, nowhere else. */
const UNBOUND_PREFIX = 'enc1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/**
 * Decrypted values kept in memory, the least recently used dropped first: the delivery hot path
 * opens the same partners' secrets over and over.
 */
const CACHE_LIMIT = 1_000;

interface RingKey {
  id: string;
  key: Buffer;
}

/** A short public id of a key, stored beside each value so the right key opens it. */
export function keyId(secretsKey: string): string {
  return createHash('sha256').update(`funding-service key id:${secretsKey}`).digest('hex').slice(0, 8);
}

/** A stored value that does not open where it is: sealed for another row or column, or altered. */
export class SealBroken extends Error {}

export class SecretBox {
  private readonly ring: RingKey[];
  private readonly cache = new Lru<string, string>(CACHE_LIMIT);

  constructor(secretsKeys: string[]) {
    if (secretsKeys.length === 0) throw new Error('SecretBox needs at least one key');
    // SECRETS_KEY is a passphrase-like string of at least 32 characters; HKDF turns it into exactly 256 bits.
    this.ring = secretsKeys.map((k) => ({
      id: keyId(k),
      key: Buffer.from(
        hkdfSync('sha256', Buffer.from(k, 'utf8'), Buffer.alloc(0), 'funding-service secrets at rest v1', 32),
      ),
    }));
  }

  /** `enc2:<key id>:<base64url(iv | tag | ciphertext)>`: plain ASCII, so storing it cannot fail. */
  seal(plain: string, column: SealColumn, row: string): string {
    return this.encrypt(plain, boundTo(column, row), PREFIX);
  }

  /**
   * The plain value of what is stored in `column` of `row`. A value that is not sealed (written
   * before secrets were encrypted, and not yet re-sealed at start) is returned as it is. Throws
   * SealBroken for one sealed for another row or column, or altered, or in the unbound form.
   */
  open(stored: string, column: SealColumn, row: string): string {
    if (!isSealed(stored)) return stored;
    const cacheKey = `${column}|${row}|${stored}`;
    const hit = this.cache.get(cacheKey);
    if (hit !== undefined) return hit;
    if (stored.startsWith(`${UNBOUND_PREFIX}:`))
      throw new SealBroken(
        `${describe(column, row)} is sealed in the form not bound to its row, ` +
          'which only the migration that reseals them opens',
      );
    const plain = this.decrypt(stored, boundTo(column, row), describe(column, row));
    this.cache.set(cacheKey, plain);
    return plain;
  }

  /** A value in the form sealed before values were bound to their row (`enc1`, `context` its column's name then). */
  openUnbound(stored: string, context: string): string {
    if (!stored.startsWith(`${UNBOUND_PREFIX}:`)) throw new Error(`not a value of the unbound form (${context})`);
    return this.decrypt(stored, Buffer.from(context), `a value of ${context}`);
  }

  /** Seals in that form: for the migration's way back only. */
  sealUnbound(plain: string, context: string): string {
    return this.encrypt(plain, Buffer.from(context), UNBOUND_PREFIX);
  }

  /** Sealed with the newest key: nothing to re-seal. */
  isCurrent(stored: string): boolean {
    return stored.startsWith(`${PREFIX}:${this.ring[0].id}:`);
  }

  /** The SQL LIKE pattern of values sealed with the newest key. */
  currentPattern(): string {
    return `${PREFIX}:${this.ring[0].id}:%`;
  }

  private encrypt(plain: string, aad: Buffer, prefix: string): string {
    const { id, key } = this.ring[0];
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(aad);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${prefix}:${id}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  private decrypt(stored: string, aad: Buffer, what: string): string {
    const [, id, data] = stored.split(':');
    const ringKey = this.ring.find((k) => k.id === id);
    // The key id is public; naming it tells the operator which SECRETS_KEY entry is missing.
    if (!ringKey) throw new Error(`a secret is sealed with key ${id}, which SECRETS_KEY does not list`);
    const raw = Buffer.from(data, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', ringKey.key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(aad);
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SealBroken(`${what} does not open: it was sealed for another row or column, or altered`);
    }
  }
}

/** The associated data: unambiguous whatever the row id holds. */
const boundTo = (column: SealColumn, row: string) => Buffer.from(JSON.stringify([PREFIX, column, row]));

/** Names the row (ids are not secret), never the value. */
const describe = (column: SealColumn, row: string) => `${column} of row ${JSON.stringify(row)}`;

export function isSealed(stored: string): boolean {
  return /^enc[12]:[0-9a-f]{8}:[A-Za-z0-9_-]+$/.test(stored);
}
