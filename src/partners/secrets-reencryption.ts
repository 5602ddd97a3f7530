import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { SealBroken, SealColumn, SEALED_COLUMNS, SecretBox } from '../platform/index.js';
import { SealedSecretRepository } from './sealed-secret.repository.js';

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
    private readonly secrets: SealedSecretRepository,
    private readonly box: SecretBox,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    let total = 0;
    for (const sealed of Object.keys(SEALED_COLUMNS) as SealColumn[]) {
      for (const column of SEALED_COLUMNS[sealed].columns) total += await this.reseal(sealed, column);
    }
    if (total > 0) this.log.log(`re-sealed ${total} stored secrets with the newest SECRETS_KEY`);
  }

  /** Returns how many values were re-sealed. */
  private async reseal(sealed: SealColumn, column: string): Promise<number> {
    let done = 0;
    let after = '';
    for (;;) {
      const rows = await this.secrets.batch(sealed, column, this.box.currentPattern(), after);
      if (rows.length === 0) return done;
      for (const read of rows) {
        const plain = this.opened(read.value, sealed, column, read.rid);
        if (plain === null) continue;
        done += await this.secrets.replace(sealed, column, read, this.box.seal(plain, sealed, read.rid));
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
