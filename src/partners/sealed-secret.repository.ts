import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SealColumn, SEALED_COLUMNS } from '../platform/index.js';

/** Values read per statement by the re-sealing at start. */
export const RESEAL_BATCH = 500;

/** A stored value with its row's id (what it is sealed for) and key columns. */
export interface SealedRow {
  rid: string;
  keys: string[];
  value: string;
}

/**
 * The statements of the re-sealing at start (secrets-reencryption.ts), one per sealed column and
 * method: table and column names are constants (SEALED_COLUMNS), never input.
 */
@Injectable()
export class SealedSecretRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * A batch of values of the column not sealed with the newest key (`pattern` does not match them),
   * past `after`. Keyset over the column value itself: rows already re-sealed sort elsewhere and
   * are not met again.
   */
  batch(sealed: SealColumn, column: string, pattern: string, after: string): Promise<SealedRow[]> {
    const { table, row, key } = SEALED_COLUMNS[sealed];
    return this.db.query(
      `SELECT ${row} AS rid, ARRAY[${key.map((k) => `${k}::text`).join(', ')}] AS keys, ${column} AS value
          FROM ${table}
          WHERE ${column} IS NOT NULL AND ${column} NOT LIKE $1 AND ${column} > $2
          ORDER BY ${column} LIMIT ${RESEAL_BATCH}`,
      [pattern, after],
    );
  }

  /** Replaces the value if it is still the one read (compare-and-set); how many rows changed (0 or 1). */
  async replace(sealed: SealColumn, column: string, read: SealedRow, resealed: string): Promise<number> {
    const { table, key } = SEALED_COLUMNS[sealed];
    const keyMatches = key.map((k, i) => `${k} = $${i + 2}`).join(' AND ');
    const [, n]: [unknown, number] = await this.db.query(
      `UPDATE ${table} SET ${column} = $1 WHERE ${keyMatches} AND ${column} = $${key.length + 2}`,
      [resealed, ...read.keys, read.value],
    );
    return n;
  }
}
