import { MigrationInterface, QueryRunner } from 'typeorm';
import { SealBroken, SEALED_COLUMNS, SealColumn, SecretBox } from '../../crypto/secret-box.js';
import { secretsKeysOf } from '../migration-secrets.js';

/** The associated data each column's values were sealed with before: the column's name alone. */
const UNBOUND_CONTEXT: Record<SealColumn, string> = {
  'partners.signing_secret': 'partners.signing_secret',
  'partner_client_certificates.private_key': 'partners.client_key',
  'idempotency_keys.response': 'idempotency_keys.response',
};

const BATCH = 500;

/**
 * Every sealed value re-sealed bound to its row as well as its column (secret-box.ts): a
 * signing key or client key copied into another partner's row no longer opens there. Reads the
 * old form (`enc1`) and writes the new (`enc2`, newest SECRETS_KEY), in the migration's
 * transaction: all of them or none; values already in the new form (or in clear, which the
 * start's re-sealing seals) are left, so running it again changes nothing. A value sealed with
 * a key SECRETS_KEY does not list stops it, naming the key id; one that does not open (altered)
 * is left: it opens nowhere.
 */
export class SealedValuesBoundToRows1764700100000 implements MigrationInterface {
  name = 'SealedValuesBoundToRows1764700100000';

  async up(q: QueryRunner): Promise<void> {
    await reseal(q, 'enc1', (box, value, sealed, row) =>
      box.seal(box.openUnbound(value, UNBOUND_CONTEXT[sealed]), sealed, row),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await reseal(q, 'enc2', (box, value, sealed, row) =>
      box.sealUnbound(box.open(value, sealed, row), UNBOUND_CONTEXT[sealed]),
    );
  }
}

type Convert = (box: SecretBox, value: string, sealed: SealColumn, row: string) => string;

/**
 * Converts every value of every sealed column in the form `from`, batch by batch, keyset over the
 * value itself (a converted value leaves the form). One that does not open where it is (sealed for
 * another row, altered) opens nowhere: it is left as it is.
 */
async function reseal(q: QueryRunner, from: string, convert: Convert): Promise<void> {
  let box: SecretBox | null = null;
  for (const sealed of Object.keys(SEALED_COLUMNS) as SealColumn[]) {
    const { table, columns, row, key } = SEALED_COLUMNS[sealed];
    for (const column of columns) {
      let after = '';
      for (;;) {
        const rows = (await q.query(
          `SELECT ${row} AS rid, ARRAY[${key.map((k) => `${k}::text`).join(', ')}] AS keys, ${column} AS value
             FROM ${table} WHERE ${column} LIKE $1 AND ${column} > $2 ORDER BY ${column} LIMIT ${BATCH}`,
          [`${from}:%`, after],
        )) as { rid: string; keys: string[]; value: string }[];
        if (rows.length === 0) break;
        box ??= new SecretBox(secretsKeysOf(q.connection));
        for (const r of rows) {
          const converted = convertible(() => convert(box!, r.value, sealed, r.rid));
          if (converted === null) continue;
          await q.query(
            `UPDATE ${table} SET ${column} = $1 WHERE ${key.map((k, i) => `${k} = $${i + 2}`).join(' AND ')}`,
            [converted, ...r.keys],
          );
        }
        after = rows[rows.length - 1].value;
      }
    }
  }
}

function convertible(convert: () => string): string | null {
  try {
    return convert();
  } catch (e) {
    if (e instanceof SealBroken) return null;
    throw e;
  }
}
