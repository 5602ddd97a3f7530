import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SecretBox, SealContext } from './secret-box.js';

const BATCH = 500;

/**
 * At start, re-seals with the newest SECRETS_KEY every stored secret sealed with an older key
 * (or still in clear from before encryption), so the older key can then be dropped from the
 * list. A value sealed with a key the list lacks stops the start, naming the key id. Each value is replaced only if it is still the one read (compare-and-set): a rotation
 * or another process re-sealing meanwhile wins, and nothing is overwritten with a stale secret.
 */
@Injectable()
export class SecretsReencryption implements OnApplicationBootstrap {
  private readonly log = new Logger('SecretsReencryption');

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly box: SecretBox,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const counts = [
      await this.reseal('partners', 'id::uuid', 'signing_secret', 'partners.signing_secret'),
      await this.reseal('partners', 'id::uuid', 'previous_signing_secret', 'partners.signing_secret'),
      await this.reseal('partner_client_certificates', 'partner_id::uuid', 'private_key', 'partners.client_key'),
      // No single-column key there: the row's physical address, good until the row changes, which the compare-and-set catches.
      await this.reseal('idempotency_keys', 'ctid::tid', 'response', 'idempotency_keys.response'),
    ];
    const total = counts.reduce((a, b) => a + b, 0);
    if (total > 0) this.log.log(`re-sealed ${total} stored secrets with the newest SECRETS_KEY`);
  }

  /** Returns how many values were re-sealed. Table and column names are constants of this file. */
  private async reseal(table: string, id: `${string}::${string}`, column: string, context: SealContext): Promise<number> {
    const [idColumn, idType] = id.split('::');
    let done = 0;
    let after = '';
    for (;;) {
      // Keyset over the column value itself: rows already re-sealed sort elsewhere and are not met again.
      const rows: { rid: string; value: string }[] = await this.db.query(
        `SELECT ${idColumn}::text AS rid, ${column} AS value FROM ${table}
          WHERE ${column} IS NOT NULL AND ${column} NOT LIKE $1 AND ${column} > $2
          ORDER BY ${column} LIMIT ${BATCH}`,
        [this.box.currentPattern(), after],
      );
      if (rows.length === 0) return done;
      for (const { rid, value } of rows) {
        const resealed = this.box.seal(this.box.open(value, context), context);
        const [, n]: [unknown, number] = await this.db.query(
          `UPDATE ${table} SET ${column} = $1 WHERE ${idColumn} = $2::${idType} AND ${column} = $3`,
          [resealed, rid, value],
        );
        done += n;
      }
      after = rows[rows.length - 1].value;
    }
  }
}
