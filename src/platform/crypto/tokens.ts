import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Standard Webhooks secret form: `whsec_` + base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** API keys carry 256 random bits, so an unsalted sha256 is a sufficient one-way hash. */
export function newApiKey(): string {
  return `fsk_${randomBytes(32).toString('base64url')}`;
}

/** A token's SHA-256 digest (one-shot: no Hash object per call, on the path of every request). */
export function tokenDigest(token: string): Buffer {
  return hash('sha256', token, 'buffer');
}

/** A token's SHA-256 as stored (`api_key_hash`, `token_hash`): hex. */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** Constant-time comparison of two digests from {@link tokenDigest}. */
export function sameDigest(a: Buffer, b: Buffer): boolean {
  return timingSafeEqual(a, b);
}

/** Constant-time comparison of two secrets of any length (hashing first equalises lengths). */
export function safeEqual(a: string, b: string): boolean {
  return sameDigest(tokenDigest(a), tokenDigest(b));
}

export function bearerToken(header: string | undefined): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m ? m[1] : null;
}
