import { MigrationInterface, QueryRunner } from 'typeorm';

const KINDS = ['first', 'retry', 'probe', 'redelivery', 'replay', 'test'];

/**
 * What an attempt was and what went over the wire, for the portal's callback page: its kind (first
 * attempt, retry, probe of an open destination, first attempt after a redelivery or a replay, a
 * test callback's one attempt), its place in its schedule and how many that schedule allowed; the
 * request headers sent (webhook-id, webhook-timestamp, webhook-signature, content type, user
 * agent); the answer's status line and its headers, bounded (egress/answer-headers.ts). All
 * written by the statement that records the attempt, no extra write. `callbacks.restarted_by`:
 * which repair last restarted a callback's schedule (a redelivery or a replay), so its next first
 * attempt says which. New columns are NULL on the rows before them (the page then derives the
 * kind, as before); the checks are added NOT VALID then validated, without blocking writes.
 */
export class AttemptExchange1764830590000 implements MigrationInterface {
  name = 'AttemptExchange1764830590000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE callback_attempts ADD COLUMN kind text, ADD COLUMN schedule_number integer,
                   ADD COLUMN schedule_allows integer, ADD COLUMN request_headers jsonb,
                   ADD COLUMN response_status text, ADD COLUMN response_headers jsonb,
                   ADD CONSTRAINT callback_attempts_kind_check CHECK (kind IN (${list(KINDS)})) NOT VALID`);
    await q.query('ALTER TABLE callback_attempts VALIDATE CONSTRAINT callback_attempts_kind_check');
    await q.query(`ALTER TABLE callbacks ADD COLUMN restarted_by text,
                   ADD CONSTRAINT callbacks_restarted_by_check
                     CHECK (restarted_by IN ('redelivery', 'replay')) NOT VALID`);
    await q.query('ALTER TABLE callbacks VALIDATE CONSTRAINT callbacks_restarted_by_check');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE callbacks DROP COLUMN restarted_by');
    await q.query(`ALTER TABLE callback_attempts DROP COLUMN kind, DROP COLUMN schedule_number,
                   DROP COLUMN schedule_allows, DROP COLUMN request_headers, DROP COLUMN response_status,
                   DROP COLUMN response_headers`);
  }
}

const list = (values: string[]) => values.map((v) => `'${v}'`).join(', ');
