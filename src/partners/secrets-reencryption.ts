import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SealBroken, SealColumn, SEALED_COLUMNS, SecretBox } from '../platform/index.js';

const BATCH = 500;

/**
 * At start, re-seals with the newest SECRETS_KEY every stored secret sealed with an older key
 * (or still in clear from before encryption), each for its own row, so the older key can then be
 * dropped from the list. A value sealed with a key the list lacks stops the start, naming the key
 * id; one that does not open where it is (sealed for another row, altered) is left as it is and
 * logged, naming its row: it never opens, so nothing signs with it. Each value is replaced only if
 * it is still the one read (compare-and-set): a rotation or another process re-sealing meanwhile
 * wins, and nothing is overwritten with a stale secret.
 */
@Injectable()
export class SecretsReencryption implements OnApplicationBootstrap {
  private readonly log = new Logger('SecretsReencryption');

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly box: SecretBox,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    let total = 0;
    for (const sealed of Object.keys(SEALED_COLUMNS) as SealColumn[]) {
      for (const column of SEALED_COLUMNS[sealed].columns) total += await this.reseal(sealed, column);
    }
    if (total > 0) this.log.log(`re-sealed ${total} stored secrets with the newest SECRETS_KEY`);
  }

  /** Returns how many values were re-sealed. Table and column names are constants (SEALED_COLUMNS). */
  private async reseal(sealed: SealColumn, column: string): Promise<number> {
    const { table, row, key } = SEALED_COLUMNS[sealed];
    const keyMatches = key.map((k, i) => `${k} = $${i + 2}`).join(' AND ');
    let done = 0;
    let after = '';
    for (;;) {
      // Keyset over the column value itself: rows already re-sealed sort elsewhere and are not met again.
      const rows: { rid: string; keys: string[]; value: string }[] = await this.db.query(
        `SELECT ${row} AS rid, ARRAY[${key.map((k) => `${k}::text`).join(', ')}] AS keys, ${column} AS value
          FROM ${table}
          WHERE ${column} IS NOT NULL AND ${column} NOT LIKE $1 AND ${column} > $2
          ORDER BY ${column} LIMIT ${BATCH}`,
        [this.box.currentPattern(), after],
      );
      if (rows.length === 0) return done;
      for (const { rid, keys, value } of rows) {
        const plain = this.opened(value, sealed, column, rid);
        if (plain === null) continue;
        const [, n]: [unknown, number] = await this.db.query(
          `UPDATE ${table} SET ${column} = $1 WHERE ${keyMatches} AND ${column} = $${key.length + 2}`,
          [this.box.seal(plain, sealed, rid), ...keys, value],
        );
        done += n;
      }
      after = rows[rows.length - 1].value;
    }
  }

  private opened(value: string, sealed: SealColumn, column: string, rid: string): string | null {
    try {
      return this.box.open(value, sealed, rid);
    } catch (e) {
      if (!(e instanceof SealBroken)) throw e;
      this.log.error(`${column} left as it is: ${e.message}`);
      return null;
    }
  }
}
