import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config.js';
import { bearerToken, safeEqual, sameDigest, tokenDigest } from '../partners/partner-secrets.js';
import { BOOTSTRAP_OPERATOR } from './operator.entity.js';
import { OperatorIdentity } from '../access/operator-role.js';

/**
 * How long a process trusts what it read of a token. Revocation must hold everywhere within a
 * second: a revoked token is still accepted at most this long by a process that read it just
 * before (the revoking process forgets it at once).
 */
export const OPERATOR_CACHE_MS = 500;
/** Tokens remembered at most; beyond, the cache starts again (an operator's request costs one read). */
const CACHE_LIMIT = 10_000;

const ACTIVE_BY_HASH = `SELECT id, name, role FROM operators WHERE token_hash = $1 AND revoked_at IS NULL`;

/**
 * The one check of an operator credential, for the API's guard and the queue dashboard alike:
 * `Bearer <token>` (the API and the dashboard), or HTTP Basic `<name>:<token>` (the dashboard).
 * The deployment's ADMIN_TOKEN is the bootstrap operator `admin` with role `admin`, compared in
 * memory; every other token is looked up by its SHA-256 hash, the answer kept for at most
 * {@link OPERATOR_CACHE_MS}.
 */
@Injectable()
export class OperatorCredentials {
  private readonly cache = new Map<string, { operator: OperatorIdentity | null; at: number }>();
  private bootstrap: Promise<OperatorIdentity> | undefined;
  /** ADMIN_TOKEN's digest, taken once: a presented token is hashed once and compared with it. */
  private readonly adminDigest: Buffer;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.adminDigest = tokenDigest(config.adminToken);
  }

  /** The operator of a `Bearer <token>` header (the API), or null (missing, malformed, unknown or revoked). */
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

  /** Forgets a token at once in this process (other processes within OPERATOR_CACHE_MS). */
  forget(tokenHash: string): void {
    this.cache.delete(tokenHash);
  }

  private async byToken(token: string): Promise<OperatorIdentity | null> {
    // One digest per request, for both the comparison with ADMIN_TOKEN and the lookup by hash.
    const digest = tokenDigest(token);
    if (sameDigest(digest, this.adminDigest)) return this.bootstrapOperator();
    const hash = digest.toString('hex');
    const cached = this.cache.get(hash);
    if (cached && Date.now() - cached.at < OPERATOR_CACHE_MS) return cached.operator;
    const [row]: OperatorIdentity[] = await this.db.query(ACTIVE_BY_HASH, [hash]);
    const operator = row ? { id: row.id, name: row.name, role: row.role } : null;
    // Only known tokens are remembered: a stranger's guesses would only fill the cache.
    if (operator) {
      if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
      this.cache.set(hash, { operator, at: Date.now() });
    } else {
      this.cache.delete(hash);
    }
    return operator;
  }

  /** The bootstrap operator's row (created by the migration), read once per process. */
  private bootstrapOperator(): Promise<OperatorIdentity> {
    this.bootstrap ??= this.db
      .query(`SELECT id, name, role FROM operators WHERE name = $1`, [BOOTSTRAP_OPERATOR])
      .then(([row]: OperatorIdentity[]) => {
        if (!row) throw new Error(`the bootstrap operator "${BOOTSTRAP_OPERATOR}" is missing from table operators`);
        return { id: row.id, name: row.name, role: 'admin' as const };
      });
    this.bootstrap.catch(() => (this.bootstrap = undefined));
    return this.bootstrap;
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
