import { Injectable } from '@nestjs/common';
import { EntityManager, EntityMetadata, EntityTarget, ObjectLiteral } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata.js';
import { notFound } from '../http/domain-error.js';

/**
 * A change's row locks and write-backs through the ORM, inside the change's transaction (`m`):
 * the statements TypeORM builds for an entity, one method each.
 */
@Injectable()
export class LockedRows {
  /** Loads one row with `SELECT … FOR UPDATE`, or throws a 404 naming the resource. */
  async lock<T extends ObjectLiteral>(
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
  async writeBack<T extends ObjectLiteral & { id: string }>(
    m: EntityManager,
    entity: EntityTarget<T>,
    row: T,
  ): Promise<void> {
    const values: Record<string, unknown> = {};
    for (const c of updatableColumns(m.connection.getMetadata(entity))) values[c.propertyName] = row[c.propertyName];
    await m
      .createQueryBuilder()
      .update(entity)
      .set(values as never)
      .where('id = :id', { id: row.id })
      .execute();
  }
}

/** The columns a change writes back: all but the key, the creation time and relations. */
export function updatableColumns(meta: EntityMetadata): ColumnMetadata[] {
  return meta.columns.filter((c) => !c.isPrimary && !c.isCreateDate && c.isUpdate && !c.relationMetadata);
}
