import { MigrationInterface, QueryRunner } from 'typeorm';
import { buildIndexConcurrently } from './concurrent-index.js';

/**
 * Indexes of the operators' look-ups (docs/architecture.md, "Decisions"):
 * - `partners_created_idx (created_at, id)`: the partner list, newest first, a page at a time
 *   from its cursor (a range of it, read backwards, stopped at the page's end);
 * - `partners_name_trgm_idx`: the list's `name` filter, a case-insensitive part of the name
 *   (`ILIKE '%…%'`), by pg_trgm's trigrams, so a rare name does not read every partner; a part
 *   shorter than three characters has no trigram and is read along the first index instead. Without
 *   fastupdate: a new partner's entries go into the index at once (partners are created seldom), never
 *   into a pending list that the planner prices as read whole until a vacuum merges it;
 * - `destinations_open_idx (opened_at, key) WHERE opened_at IS NOT NULL`: the open destinations, longest
 *   open first (the alert gauge's few series and the longest-open figure), without reading the closed
 *   ones. Partial, so a settlement of a closed destination does not touch it.
 * pg_trgm is a trusted extension (PostgreSQL 13 and later): the database's owner may create it.
 * Built CONCURRENTLY, outside a transaction, so the tables keep taking writes.
 */
export class PartnerLookupIndexes1764810100000 implements MigrationInterface {
  name = 'PartnerLookupIndexes1764810100000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
    await buildIndexConcurrently(q, 'partners_created_idx', 'partners (created_at, id)');
    const trigrams = 'partners USING gin (name gin_trgm_ops) WITH (fastupdate = off)';
    await buildIndexConcurrently(q, 'partners_name_trgm_idx', trigrams);
    const open = 'destinations (opened_at, key) WHERE opened_at IS NOT NULL';
    await buildIndexConcurrently(q, 'destinations_open_idx', open);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS destinations_open_idx');
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS partners_name_trgm_idx');
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS partners_created_idx');
  }
}
