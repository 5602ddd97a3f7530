import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { APP_CONFIG, AppConfig, hashToken, TransactionRunner } from '../platform/index.js';
import { AuditLog } from './audit/audit-log.js';
import { BOOTSTRAP_OPERATOR } from './operator.entity.js';
import { OperatorRepository } from './operator.repository.js';

/**
 * The deployment's ADMIN_TOKEN as the bootstrap operator `admin` (docs/operations.md, "The
 * bootstrap token"), settled once at start by every process that serves the API:
 * - the value `admin` holds already: nothing changes, revoked or not (a revoked value stays so);
 * - a value `admin` held before (retired): refused, `admin` stays as it is;
 * - any other value: `admin` holds it from now on, active again (the break-glass path), the value
 *   it replaces retired for good, with an `operator.bootstrap` audit entry in the same transaction.
 * The admin row is locked, so processes starting together write one entry between them.
 */
@Injectable()
export class OperatorsBootstrap implements OnApplicationBootstrap {
  private readonly log = new Logger('Operators');

  constructor(
    private readonly writes: TransactionRunner,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly audit: AuditLog,
    private readonly operators: OperatorRepository,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const hash = hashToken(this.config.adminToken);
    const outcome = await this.writes.transaction(async (m) => {
      const admin = await this.operators.lockByName(m, BOOTSTRAP_OPERATOR);
      if (!admin) throw new Error(`the bootstrap operator "${BOOTSTRAP_OPERATOR}" is missing from table operators`);
      if (admin.token_hash === hash) return admin.revoked_at ? 'revoked' : 'held';
      if (await this.operators.retired(m, hash)) return 'retired';
      if (admin.token_hash !== null) await this.operators.retire(m, admin.token_hash);
      await this.operators.setToken(m, admin.id, hash);
      const operator = { id: admin.id, name: BOOTSTRAP_OPERATOR, role: 'admin' as const };
      await this.audit.record(
        m,
        { operator, action: 'operator.bootstrap' },
        {
          targetType: 'operator',
          targetId: admin.id,
          before: {
            bootstrapToken: admin.token_hash === null ? null : 'replaced',
            revokedAt: admin.revoked_at?.toISOString() ?? null,
          },
          after: { bootstrapToken: 'set', revokedAt: null },
        },
      );
      return 'bootstrapped';
    });
    if (outcome === 'revoked' || outcome === 'retired') {
      this.log.warn(
        `ADMIN_TOKEN was ${outcome === 'revoked' ? 'revoked' : 'replaced before'} and stays refused: ` +
          `operator ${BOOTSTRAP_OPERATOR} is not usable with it; set a value never used before to bootstrap it again`,
      );
    }
  }
}
