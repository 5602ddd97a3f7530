import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { DomainError, ErrorCode, hashToken, LockedRows, TransactionRunner } from '../platform/index.js';
import { AuditLog } from './audit/audit-log.js';
import { OperatorCredentials } from './operator-credentials.js';
import { Operator } from './operator.entity.js';
import { OperatorRepository } from './operator.repository.js';
import { OperatorRole } from './access/operator-role.js';
import type { Actor } from './actor.js';

/** Operator tokens carry 256 random bits (like API keys, so an unsalted SHA-256 is enough at rest). */
function newOperatorToken(): string {
  return `fso_${randomBytes(32).toString('base64url')}`;
}

const UNIQUE_VIOLATION = '23505';

export interface OperatorView {
  id: string;
  name: string;
  role: OperatorRole;
  createdAt: string;
  revokedAt: string | null;
}

const view = (o: Operator): OperatorView => ({
  id: o.id,
  name: o.name,
  role: o.role,
  createdAt: o.createdAt.toISOString(),
  revokedAt: o.revokedAt?.toISOString() ?? null,
});

/** Named operator credentials: created with a role, listed, revoked; each change audited in its transaction. */
@Injectable()
export class OperatorsService {
  constructor(
    private readonly operators: OperatorRepository,
    private readonly writes: TransactionRunner,
    private readonly audit: AuditLog,
    private readonly credentials: OperatorCredentials,
    private readonly rows: LockedRows,
  ) {}

  /** The token is returned this once and stored as its hash only. */
  async create(
    actor: Actor,
    name: string,
    role: OperatorRole,
  ): Promise<{ id: string; name: string; role: OperatorRole; token: string; createdAt: string }> {
    const token = newOperatorToken();
    try {
      return await this.writes.transaction(async (m) => {
        const operator = await this.operators.insert(m, { name, role, tokenHash: hashToken(token) });
        await this.audit.record(m, actor, {
          targetType: 'operator',
          targetId: operator.id,
          before: {},
          after: { name, role },
        });
        return {
          id: operator.id,
          name: operator.name,
          role: operator.role,
          token,
          createdAt: operator.createdAt.toISOString(),
        };
      });
    } catch (e) {
      if ((e as { code?: string }).code === UNIQUE_VIOLATION)
        throw new DomainError(
          'conflict',
          ErrorCode.operator_name_taken,
          `An operator named ${JSON.stringify(name)} exists already (names are never reused)`,
        );
      throw e;
    }
  }

  async list(): Promise<OperatorView[]> {
    return (await this.operators.list()).map(view);
  }

  /**
   * The token stops working at once here, within OPERATOR_CACHE_MS in every other process; the
   * bootstrap operator's too (its ADMIN_TOKEN stays refused after restarts: operators-bootstrap.ts).
   */
  async revoke(actor: Actor, id: string): Promise<void> {
    const hash = await this.writes.transaction(async (m) => {
      const operator = await this.rows.lock(m, Operator, { id }, 'Operator');
      if (operator.revokedAt)
        throw new DomainError(
          'conflict',
          ErrorCode.operator_revoked,
          `Operator is already revoked (current status: revoked at ${operator.revokedAt.toISOString()})`,
        );
      operator.revokedAt = new Date();
      await this.rows.writeBack(m, Operator, operator);
      await this.audit.record(m, actor, {
        targetType: 'operator',
        targetId: id,
        before: { revokedAt: null },
        after: { revokedAt: operator.revokedAt.toISOString() },
      });
      return operator.tokenHash;
    });
    if (hash) this.credentials.forget(hash);
  }
}
