import type { DataSource } from 'typeorm';

/**
 * SECRETS_KEY, for the migrations that re-seal stored values: TypeORM makes the migrations
 * itself, so the keys go with the data source that runs them (openDatabase), read back through the
 * query runner's connection.
 */
const given = new WeakMap<DataSource, string[]>();

export function giveSecretsKeys(db: DataSource, secretsKeys: string[]): void {
  given.set(db, secretsKeys);
}

/** Throws when none were given: a database with sealed values is never migrated without them. */
export function secretsKeysOf(db: DataSource): string[] {
  const keys = given.get(db);
  if (!keys || keys.length === 0)
    throw new Error('stored secrets must be re-sealed, and SECRETS_KEY was not given to the migrations');
  return keys;
}
