import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { ResourceRef, CallbackUrlFollowing } from '../../callbacks/index.js';
import { DomainError, ErrorCode, notFound } from '../../platform/index.js';
import { messagesOf, UrlColumn, urlColumn } from './url-properties.js';

/** A partner's move of every resource registered with one URL to another (POST /v1/callback-urls/move). */
export interface UrlMoveSpec {
  partnerId: string;
  from: string;
  /** Checked as at creation, in its stored form. */
  to: string;
  /** At most this many resources at once; more is a 422 before anything is locked. */
  limit: number;
}

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
export const COUNT_USES = `SELECT count(*)::int AS n FROM (${USES} LIMIT $3) u`;

/**
 * The companies owning a resource that uses the URL, locked in id order: the company first, as
 * every change of a company and its rows takes them, and in one order, so two moves queue too.
 */
export const LOCK_COMPANIES = `
  SELECT c.id FROM companies c WHERE c.id IN (
    SELECT c.id FROM companies c WHERE c.partner_id = $1 AND c.callback_url = $2
    UNION SELECT l.company_id FROM limit_requests l JOIN companies c ON c.id = l.company_id
           WHERE c.partner_id = $1 AND l.status_callback = $2
    UNION SELECT w.company_id FROM withdrawal_requests w JOIN companies c ON c.id = w.company_id
           WHERE c.partner_id = $1 AND (w.status_callback = $2 OR w.loan_status_callback = $2))
  ORDER BY c.id FOR UPDATE`;

/** Under the companies' locks: each resource still using `$2` takes `$3`; each row is locked after its company. */
export const MOVE_COMPANIES = `UPDATE companies SET callback_url = $3 WHERE id = ANY($1::uuid[]) AND callback_url = $2
  RETURNING id AS "companyId", id`;
export const MOVE_LIMIT_REQUESTS = `UPDATE limit_requests SET status_callback = $3
   WHERE company_id = ANY($1::uuid[]) AND status_callback = $2
  RETURNING company_id AS "companyId", id`;
export const MOVE_WITHDRAWALS = `
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

type Moved = ResourceRef & { status?: boolean; loan?: boolean };

/** 422: the move would change more resources than one transaction may. */
export const moveOverLimit = (limit: number) =>
  new DomainError(
    'rule',
    ErrorCode.url_move_over_limit,
    `More than ${limit.toLocaleString('en')} resources use this URL: nothing was moved; change them with PATCH, ` +
      'resource by resource (each moves its waiting callbacks too)',
  );

/** The funding tables' side of a partner's URL move; the callbacks follow through the callback store. */
@Injectable()
export class UrlMoves {
  constructor(private readonly following: CallbackUrlFollowing) {}

  /**
   * Moves a URL in the transaction `m` (docs/architecture.md, "Changing a callback URL"): each
   * resource registered with `from`, in any property, takes `to`, and its callbacks follow exactly as
   * its own PATCH's do (store/url-changes.ts, one statement per property for all of them). Returns
   * how many resources moved; 404 when none uses `from`, 422 over the limit (nothing written).
   */
  async moveUrlIn(m: EntityManager, spec: UrlMoveSpec): Promise<number> {
    const { partnerId, from, to, limit } = spec;
    const [{ n }]: { n: number }[] = await m.query(COUNT_USES, [partnerId, from, limit + 1]);
    if (n > limit) throw moveOverLimit(limit);
    const locked: { id: string }[] = n === 0 ? [] : await m.query(LOCK_COMPANIES, [partnerId, from]);
    // None, or none any more (changed before the locks were taken): `from` is not in use.
    if (locked.length === 0) throw notFound('Callback URL');
    const params = [locked.map((c) => c.id), from, to];
    const update = async (sql: string) => (await m.query<[Moved[], number]>(sql, params))[0];
    const moved = await update(MOVE_COMPANIES);
    const requests = await update(MOVE_LIMIT_REQUESTS);
    const withdrawals = await update(MOVE_WITHDRAWALS);
    const count = moved.length + requests.length + withdrawals.length;
    // A change committed while this waited for a lock moved them all away first.
    if (count === 0) throw notFound('Callback URL');
    const follow = async (table: UrlColumn['table'], column: string, resources: Moved[]) => {
      if (resources.length === 0) return;
      const c = urlColumn(table, column as never);
      const refs = resources.map(({ companyId, id }) => ({ companyId, id }));
      await this.following.followUrl(
        m,
        { property: c.column, messages: messagesOf(c), key: c.key, resources: refs },
        to,
      );
    };
    await follow('companies', 'callback_url', moved);
    await follow('limit_requests', 'status_callback', requests);
    await follow(
      'withdrawal_requests',
      'status_callback',
      withdrawals.filter((w) => w.status),
    );
    await follow(
      'withdrawal_requests',
      'loan_status_callback',
      withdrawals.filter((w) => w.loan),
    );
    return count;
  }
}
