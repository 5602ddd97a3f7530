import { MigrationInterface, QueryRunner } from 'typeorm';

export class InitialSchema1763800000000 implements MigrationInterface {
  name = 'InitialSchema1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE partners (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL,
        api_key_hash text NOT NULL UNIQUE,
        signing_secret text NOT NULL,
        previous_signing_secret text,
        previous_secret_expires_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE companies (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        partner_id uuid NOT NULL REFERENCES partners(id),
        name text NOT NULL,
        registration_number text,
        currency char(3) NOT NULL,
        callback_url text,
        credit_status text NOT NULL CHECK (credit_status IN ('pending','active','suspended','closed')),
        credit_limit numeric(18,2) NOT NULL DEFAULT 0 CHECK (credit_limit >= 0),
        borrowed_amount numeric(18,2) NOT NULL DEFAULT 0 CHECK (borrowed_amount >= 0),
        annual_interest_rate numeric(7,2) NOT NULL DEFAULT 0,
        repayment_term_days integer NOT NULL DEFAULT 30,
        credit_updated_at timestamptz NOT NULL DEFAULT now(),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX companies_partner_idx ON companies (partner_id)`);
    await q.query(`
      CREATE TABLE limit_requests (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id),
        amount numeric(18,2) NOT NULL CHECK (amount > 0),
        status text NOT NULL,
        status_callback text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX limit_requests_company_idx ON limit_requests (company_id)`);
    await q.query(`
      CREATE TABLE withdrawal_requests (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id),
        amount numeric(18,2) NOT NULL CHECK (amount > 0),
        status text NOT NULL,
        status_callback text,
        loan_status_callback text,
        loan_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX withdrawal_requests_company_idx ON withdrawal_requests (company_id)`);
    await q.query(`
      CREATE TABLE loans (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id),
        withdrawal_id uuid NOT NULL UNIQUE REFERENCES withdrawal_requests(id),
        principal numeric(18,2) NOT NULL CHECK (principal > 0),
        outstanding numeric(18,2) NOT NULL CHECK (outstanding >= 0),
        currency char(3) NOT NULL,
        status text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`ALTER TABLE withdrawal_requests
      ADD CONSTRAINT withdrawal_requests_loan_fk FOREIGN KEY (loan_id) REFERENCES loans(id)`);
    await q.query(`
      CREATE TABLE loan_payments (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        loan_id uuid NOT NULL REFERENCES loans(id),
        amount numeric(18,2) NOT NULL CHECK (amount > 0),
        paid_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX loan_payments_loan_idx ON loan_payments (loan_id, paid_at)`);
    await q.query(`
      CREATE TABLE callbacks (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
        partner_id uuid NOT NULL REFERENCES partners(id),
        company_id uuid NOT NULL REFERENCES companies(id),
        message smallint NOT NULL CHECK (message BETWEEN 0 AND 4),
        url text NOT NULL,
        body text NOT NULL,
        status text NOT NULL CHECK (status IN ('pending','delivered','failed')),
        attempt_count integer NOT NULL DEFAULT 0,
        schedule_attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        enqueued_at timestamptz,
        last_error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        delivered_at timestamptz
      )`);
    // The relay's two questions: what was never handed to the queue, and what is overdue.
    await q.query(
      `CREATE INDEX callbacks_unenqueued_idx ON callbacks (seq) WHERE status = 'pending' AND enqueued_at IS NULL`,
    );
    await q.query(`CREATE INDEX callbacks_pending_due_idx ON callbacks (next_attempt_at) WHERE status = 'pending'`);
    await q.query(`CREATE INDEX callbacks_status_seq_idx ON callbacks (status, seq)`);
    await q.query(`CREATE INDEX callbacks_company_seq_idx ON callbacks (company_id, seq)`);
    await q.query(`
      CREATE TABLE callback_attempts (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        callback_id uuid NOT NULL REFERENCES callbacks(id),
        number integer NOT NULL,
        started_at timestamptz NOT NULL,
        duration_ms integer NOT NULL,
        status_code integer,
        error text,
        response_body text,
        source_address text
      )`);
    await q.query(`CREATE INDEX callback_attempts_callback_idx ON callback_attempts (callback_id, number)`);
    await q.query(`
      CREATE TABLE idempotency_keys (
        scope text NOT NULL,
        key text NOT NULL,
        request_hash text NOT NULL,
        status_code integer,
        response_body jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (scope, key)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['idempotency_keys', 'callback_attempts', 'callbacks', 'loan_payments']) {
      await q.query(`DROP TABLE ${t}`);
    }
    await q.query(`ALTER TABLE withdrawal_requests DROP CONSTRAINT withdrawal_requests_loan_fk`);
    for (const t of ['loans', 'withdrawal_requests', 'limit_requests', 'companies', 'partners']) {
      await q.query(`DROP TABLE ${t}`);
    }
  }
}
