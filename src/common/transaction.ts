import { EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import { notFound } from './domain-error.js';

/** Loads one row with `SELECT … FOR UPDATE`, or throws a 404 naming the resource. */
export async function lockOrNotFound<T extends ObjectLiteral>(
  m: EntityManager,
  entity: EntityTarget<T>,
  where: Record<string, unknown>,
  what: string,
): Promise<T> {
  const row = await m.findOne(entity, { where: where as never, lock: { mode: 'pessimistic_write' } });
  if (!row) throw notFound(what);
  return row;
}

/**
 * Writes a loaded, locked row's columns back with one UPDATE. (`save` would first re-read the
 * row to compute a diff: a second round-trip on every state change, for a row we hold locked.)
 */
export async function writeBack<T extends ObjectLiteral & { id: string }>(m: EntityManager, entity: EntityTarget<T>, row: T): Promise<void> {
  const values: Record<string, unknown> = {};
  for (const c of m.connection.getMetadata(entity).columns) {
    if (c.isPrimary || c.isCreateDate || !c.isUpdate || c.relationMetadata) continue;
    values[c.propertyName] = row[c.propertyName];
  }
  await m.createQueryBuilder().update(entity).set(values as never).where('id = :id', { id: row.id }).execute();
}
