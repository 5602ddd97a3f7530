import { MigrationInterface, QueryRunner } from 'typeorm';

/** The body of `callback_origin` (1763900000000-destinations.ts), unchanged. */
const BODY = `
        SELECT regexp_replace(regexp_replace(
                 coalesce(lower(substring(url from '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*')), url),
                 '^(https://.*):443$', '\\1'),
               '^(http://.*):80$', '\\1')`;

/**
 * `callback_origin` without RETURNS NULL ON NULL INPUT, so that PostgreSQL inlines it: a strict SQL
 * function whose body is not strict itself (`coalesce`) is run as a function of its own, with a
 * statement of its own, for every callback inserted and every settlement that follows a URL move
 * (`callbacks.destination` is generated from it). Same body: a NULL URL still gives NULL (the
 * regexp_replace around it is strict), so no stored destination changes and nothing is rewritten.
 */
export class CallbackOriginInlined1764600000000 implements MigrationInterface {
  name = 'CallbackOriginInlined1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE OR REPLACE FUNCTION callback_origin(url text) RETURNS text
      LANGUAGE sql IMMUTABLE PARALLEL SAFE CALLED ON NULL INPUT AS $$${BODY}
      $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE OR REPLACE FUNCTION callback_origin(url text) RETURNS text
      LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURNS NULL ON NULL INPUT AS $$${BODY}
      $$`);
  }
}
