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
