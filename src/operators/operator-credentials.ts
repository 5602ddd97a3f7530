import { Inject, Injectable, Optional } from '@nestjs/common';
import { CREDENTIAL_CLOCK, CredentialCache, MonotonicClock } from './access/credential-cache.js';
import { OperatorIdentity } from './access/operator-role.js';
import { bearerToken, hashToken, safeEqual } from '../platform/index.js';
import { OperatorRepository } from './operator.repository.js';

/**
 * How long a process trusts what it read of a token. Revocation must hold everywhere within a
 * second: a revoked token is still accepted at most this long by a process that read it just
 * before (the revoking process forgets it at once).
 */
export const OPERATOR_CACHE_MS = 500;
/** Tokens remembered at most; beyond, the cache starts again (an operator's request costs one read). */
const CACHE_LIMIT = 10_000;

/**
 * The one check of an operator credential, for the access gate (the API and the queue dashboard):
 * `Bearer <token>`, or HTTP Basic `<name>:<token>` (the dashboard). Every token, the bootstrap
 * operator's ADMIN_TOKEN too (operators-bootstrap.ts), is looked up by its SHA-256 hash among the
 * operators not revoked, the answer trusted for at most {@link OPERATOR_CACHE_MS}.
 */
@Injectable()
export class OperatorCredentials {
  private readonly cache: CredentialCache<OperatorIdentity>;

  constructor(
    private readonly operators: OperatorRepository,
    @Optional() @Inject(CREDENTIAL_CLOCK) clock?: MonotonicClock,
  ) {
    this.cache = new CredentialCache(OPERATOR_CACHE_MS, CACHE_LIMIT, clock);
  }

  /** The operator of a `Bearer <token>` header, or null (missing, malformed, unknown or revoked). */
  async bearer(authorization: string | undefined): Promise<OperatorIdentity | null> {
    const token = bearerToken(authorization);
    return token === null ? null : this.byToken(token);
  }

  /** The dashboard's: a `Bearer <token>` header, or HTTP Basic `<name>:<token>` (what a browser sends). */
  async bearerOrBasic(authorization: string | undefined): Promise<OperatorIdentity | null> {
    if (bearerToken(authorization) !== null) return this.bearer(authorization);
    const basic = parseBasic(authorization);
    if (!basic) return null;
    const operator = await this.byToken(basic.token);
    // The name must be the token's operator's: a token alone under another name is refused.
    return operator && safeEqual(operator.name, basic.name) ? operator : null;
  }

  /** Trusts a token no longer, at once in this process (other processes within OPERATOR_CACHE_MS). */
  forget(tokenHash: string): void {
    this.cache.forget(tokenHash);
  }

  private async byToken(token: string): Promise<OperatorIdentity | null> {
    const hash = hashToken(token);
    const lookup = this.cache.begin();
    const cached = this.cache.trusted(hash, lookup);
    if (cached) return cached;
    const row = await this.operators.activeByHash(hash);
    if (!row) return null;
    const operator = { id: row.id, name: row.name, role: row.role };
    this.cache.keep(lookup, hash, operator);
    return operator;
  }
}

/** HTTP Basic `<name>:<token>`; the name may not hold a colon, the token may. */
export function parseBasic(authorization: string | undefined): { name: string; token: string } | null {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization ?? '');
  if (!m) return null;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return null;
  return { name: decoded.slice(0, colon), token: decoded.slice(colon + 1) };
}
