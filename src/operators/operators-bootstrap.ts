import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { APP_CONFIG, AppConfig, hashToken, TransactionRunner } from '../platform/index.js';
import { AuditLog } from './audit/audit-log.js';
import { BOOTSTRAP_OPERATOR } from './operator.entity.js';

type AdminRow = { id: string; token_hash: string | null; revoked_at: Date | null };

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
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const hash = hashToken(this.config.adminToken);
    const outcome = await this.writes.transaction(async (m) => {
      const [admin]: AdminRow[] = await m.query(
        `SELECT id, token_hash, revoked_at FROM operators WHERE name = $1 FOR UPDATE`,
        [BOOTSTRAP_OPERATOR],
      );
      if (!admin) throw new Error(`the bootstrap operator "${BOOTSTRAP_OPERATOR}" is missing from table operators`);
      if (admin.token_hash === hash) return admin.revoked_at ? 'revoked' : 'held';
      const [retired] = await m.query<unknown[]>(`SELECT 1 FROM retired_bootstrap_tokens WHERE token_hash = $1`, [
        hash,
      ]);
      if (retired) return 'retired';
      if (admin.token_hash !== null)
        await m.query(`INSERT INTO retired_bootstrap_tokens (token_hash) VALUES ($1) ON CONFLICT DO NOTHING`, [
          admin.token_hash,
        ]);
      await m.query(`UPDATE operators SET token_hash = $2, revoked_at = NULL WHERE id = $1`, [admin.id, hash]);
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
