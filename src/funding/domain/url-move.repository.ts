import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { ResourceRef } from '../../callbacks/index.js';

/** The partner's resources using `$2` in any URL property: each company, limit request and withdrawal request once. */
const USES = `
  SELECT c.id FROM companies c WHERE c.partner_id = $1 AND c.callback_url = $2
  UNION ALL
  SELECT l.id FROM limit_requests l JOIN companies c ON c.id = l.company_id
   WHERE c.partner_id = $1 AND l.status_callback = $2
  UNION ALL
  SELECT w.id FROM withdrawal_requests w JOIN companies c ON c.id = w.company_id
   WHERE c.partner_id = $1 AND (w.status_callback = $2 OR w.loan_status_callback = $2)`;

/** How many resources use the URL, counted up to $3 (a bounded read, no lock). */
const COUNT_USES = `SELECT count(*)::int AS n FROM (${USES} LIMIT $3) u`;

/**
 * The companies owning a resource that uses the URL, locked in id order: the company first, as
 * every change of a company and its rows takes them, and in one order, so two moves queue too.
 */
const LOCK_COMPANIES = `
  SELECT c.id FROM companies c WHERE c.id IN (
    SELECT c.id FROM companies c WHERE c.partner_id = $1 AND c.callback_url = $2
    UNION SELECT l.company_id FROM limit_requests l JOIN companies c ON c.id = l.company_id
           WHERE c.partner_id = $1 AND l.status_callback = $2
    UNION SELECT w.company_id FROM withdrawal_requests w JOIN companies c ON c.id = w.company_id
           WHERE c.partner_id = $1 AND (w.status_callback = $2 OR w.loan_status_callback = $2))
  ORDER BY c.id FOR UPDATE`;

/** Under the companies' locks: each resource still using `$2` takes `$3`; each row is locked after its company. */
const MOVE_COMPANIES = `UPDATE companies SET callback_url = $3 WHERE id = ANY($1::uuid[]) AND callback_url = $2
  RETURNING id AS "companyId", id`;
const MOVE_LIMIT_REQUESTS = `UPDATE limit_requests SET status_callback = $3
   WHERE company_id = ANY($1::uuid[]) AND status_callback = $2
  RETURNING company_id AS "companyId", id`;
const MOVE_WITHDRAWALS = `
  WITH old AS (
    SELECT id, coalesce(status_callback = $2, false) AS status, coalesce(loan_status_callback = $2, false) AS loan
      FROM withdrawal_requests
     WHERE company_id = ANY($1::uuid[]) AND (status_callback = $2 OR loan_status_callback = $2)
       FOR UPDATE)
  UPDATE withdrawal_requests w
     SET status_callback = CASE WHEN old.status THEN $3 ELSE w.status_callback END,
         loan_status_callback = CASE WHEN old.loan THEN $3 ELSE w.loan_status_callback END
    FROM old WHERE w.id = old.id
  RETURNING w.company_id AS "companyId", w.id, old.status, old.loan`;

/** A resource a move changed; a withdrawal request's says which of its properties moved. */
export type Moved = ResourceRef & { status?: boolean; loan?: boolean };

/** An UPDATE's rows (TypeORM answers it with [rows, affected]). */
const update = async (m: EntityManager, sql: string, companies: string[], from: string, to: string) =>
  (await m.query<[Moved[], number]>(sql, [companies, from, to]))[0];

/** The statements of a partner's URL move (url-moves.ts), one method each, in the move's transaction. */
@Injectable()
export class UrlMoveRepository {
  /** How many resources use the URL, counted up to `limit`. */
  async countUses(m: EntityManager, partnerId: string, url: string, limit: number): Promise<number> {
    const [{ n }]: { n: number }[] = await m.query(COUNT_USES, [partnerId, url, limit]);
    return n;
  }

  lockCompanies(m: EntityManager, partnerId: string, url: string): Promise<{ id: string }[]> {
    return m.query(LOCK_COMPANIES, [partnerId, url]);
  }

  moveCompanies(m: EntityManager, companies: string[], from: string, to: string): Promise<Moved[]> {
    return update(m, MOVE_COMPANIES, companies, from, to);
  }

  moveLimitRequests(m: EntityManager, companies: string[], from: string, to: string): Promise<Moved[]> {
    return update(m, MOVE_LIMIT_REQUESTS, companies, from, to);
  }

  moveWithdrawals(m: EntityManager, companies: string[], from: string, to: string): Promise<Moved[]> {
    return update(m, MOVE_WITHDRAWALS, companies, from, to);
  }
}
