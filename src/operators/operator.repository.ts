import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { OperatorIdentity, OperatorRole } from './access/operator-role.js';
import { Operator } from './operator.entity.js';

/** The bootstrap operator's row as its start settles it. */
export type AdminRow = { id: string; token_hash: string | null; revoked_at: Date | null };

const ACTIVE_BY_HASH = `SELECT id, name, role FROM operators WHERE token_hash = $1 AND revoked_at IS NULL`;

/**
 * The statements of operators and of the bootstrap tokens they retired (retired_bootstrap_tokens)
 * written by hand, and those TypeORM builds for the Operator entity, one method each.
 */
@Injectable()
export class OperatorRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The operator not revoked whose token has this hash. */
  async activeByHash(hash: string): Promise<OperatorIdentity | undefined> {
    const [row]: OperatorIdentity[] = await this.db.query(ACTIVE_BY_HASH, [hash]);
    return row;
  }

  /** The named operator's row, locked. */
  async lockByName(m: EntityManager, name: string): Promise<AdminRow | undefined> {
    const [admin]: AdminRow[] = await m.query(
      `SELECT id, token_hash, revoked_at FROM operators WHERE name = $1 FOR UPDATE`,
      [name],
    );
    return admin;
  }

  /** Whether a bootstrap token of this hash was retired. */
  async retired(m: EntityManager, hash: string): Promise<boolean> {
    const [retired] = await m.query<unknown[]>(`SELECT 1 FROM retired_bootstrap_tokens WHERE token_hash = $1`, [hash]);
    return retired !== undefined;
  }

  async retire(m: EntityManager, hash: string): Promise<void> {
    await m.query(`INSERT INTO retired_bootstrap_tokens (token_hash) VALUES ($1) ON CONFLICT DO NOTHING`, [hash]);
  }

  /** The operator holds this token hash from now on, active again. */
  async setToken(m: EntityManager, id: string, hash: string): Promise<void> {
    await m.query(`UPDATE operators SET token_hash = $2, revoked_at = NULL WHERE id = $1`, [id, hash]);
  }

  /** A new operator, active; its id and creation time as the insert returns them. */
  async insert(m: EntityManager, values: { name: string; role: OperatorRole; tokenHash: string }): Promise<Operator> {
    return m.save(m.create(Operator, { ...values, revokedAt: null }));
  }

  /** Every operator, the oldest first. */
  async list(): Promise<Operator[]> {
    return this.db.getRepository(Operator).find({ order: { createdAt: 'ASC', id: 'ASC' } });
  }
}
