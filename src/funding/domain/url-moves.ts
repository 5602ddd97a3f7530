import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { CallbackUrlFollowing } from '../../callbacks/index.js';
import { DomainError, ErrorCode, notFound } from '../../platform/index.js';
import { messagesOf, UrlColumn, urlColumn } from './url-properties.js';
import { Moved, UrlMoveRepository } from './url-move.repository.js';

/** A partner's move of every resource registered with one URL to another (POST /v1/callback-urls/move). */
export interface UrlMoveSpec {
  partnerId: string;
  from: string;
  /** Checked as at creation, in its stored form. */
  to: string;
  /** At most this many resources at once; more is a 422 before anything is locked. */
  limit: number;
}

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
  constructor(
    private readonly following: CallbackUrlFollowing,
    private readonly moves: UrlMoveRepository,
  ) {}

  /**
   * Moves a URL in the transaction `m` (docs/architecture.md, "Changing a callback URL"): each
   * resource registered with `from`, in any property, takes `to`, and its callbacks follow exactly as
   * its own PATCH's do (store/url-changes.ts, one statement per property for all of them). Returns
   * how many resources moved; 404 when none uses `from`, 422 over the limit (nothing written).
   */
  async moveUrlIn(m: EntityManager, spec: UrlMoveSpec): Promise<number> {
    const { partnerId, from, to, limit } = spec;
    const n = await this.moves.countUses(m, partnerId, from, limit + 1);
    if (n > limit) throw moveOverLimit(limit);
    const locked = n === 0 ? [] : await this.moves.lockCompanies(m, partnerId, from);
    // None, or none any more (changed before the locks were taken): `from` is not in use.
    if (locked.length === 0) throw notFound('Callback URL');
    const companies = locked.map((c) => c.id);
    const moved = await this.moves.moveCompanies(m, companies, from, to);
    const requests = await this.moves.moveLimitRequests(m, companies, from, to);
    const withdrawals = await this.moves.moveWithdrawals(m, companies, from, to);
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
