import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { type Actor, AuditLog, trackedValues } from '../operators/index.js';
import { DomainError, ErrorCode, invalidProperty, TransactionRunner } from '../platform/index.js';
import { ReplayRepository, ReplaySelection } from './store/replay.js';

/**
 * The most failed callbacks one bulk redelivery sends again (docs/partners.md, "Your delivery log
 * and redelivery"): more, and it does nothing.
 */
export const REPLAY_LIMIT = Symbol('REPLAY_LIMIT');
export const DEFAULT_REPLAY_LIMIT = 100_000;

/** A bulk redelivery's window: failed callbacks created in [since, until), at one origin. All optional. */
export interface ReplayWindow {
  since?: Date;
  until?: Date;
  /** A callback URL's origin (`https://hooks.example.com`), as callback-destination.ts computes it. */
  destination?: string;
}

/** An operator's: the window, over every partner's callbacks unless narrowed to one partner or company. */
export interface OperatorReplayFilter extends ReplayWindow {
  partnerId?: string;
  companyId?: string;
}

/**
 * Bulk redelivery (replay after an outage): every failed callback of a selection sent again as a
 * redelivery sends one (redelivery-rules.ts: the same `webhook-id`, a fresh schedule, due now),
 * test callbacks, those whose URL was removed and operational events' deliveries left out. One
 * statement, bounded: over the limit, nothing is done (422) and the caller narrows the window. A
 * replay is a manual redelivery: of each open destination among them, the oldest goes as the next
 * probe (brought forward), and the rest follow once it closes the circuit.
 */
@Injectable()
export class BulkReplay {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly writes: TransactionRunner,
    private readonly audit: AuditLog,
    @Inject(REPLAY_LIMIT) private readonly limit: number,
    private readonly statements: ReplayRepository,
  ) {}

  /**
   * How many of the partner's failed callbacks {@link replayForPartner} would send again (the
   * portal shows it before the partner confirms), counted up to the limit + 1: over the limit, the
   * replay refuses.
   */
  countForPartner(partnerId: string, w: ReplayWindow): Promise<number> {
    return this.statements.countReplayable(this.db.manager, selection({ ...w, partnerId }), this.limit);
  }

  /** Sends the partner's own failed callbacks of the window again; how many. */
  replayForPartner(partnerId: string, w: ReplayWindow): Promise<number> {
    return this.replay(selection({ ...w, partnerId }));
  }

  /** An operator's bulk redelivery (the API's and the dashboard's Retry all); one audit entry. */
  replayAsOperator(actor: Actor, f: OperatorReplayFilter): Promise<number> {
    return this.replay(selection(f), async (m, count) =>
      this.audit.record(m, actor, {
        targetType: 'callback',
        targetId: null,
        before: { status: 'failed' },
        after: trackedValues({
          status: 'pending',
          count,
          since: f.since,
          until: f.until,
          partnerId: f.partnerId,
          companyId: f.companyId,
          destination: f.destination,
        }),
      }),
    );
  }

  private replay(s: ReplaySelection, record?: (m: EntityManager, count: number) => Promise<void>): Promise<number> {
    return this.writes.transaction(async (m) => {
      const { matched, moved } = await this.statements.replayFailed(m, s, this.limit);
      if (matched > this.limit) {
        throw new DomainError(
          'rule',
          ErrorCode.replay_over_limit,
          `More than ${this.limit} failed callbacks match: nothing was redelivered; ` +
            'narrow the window (since, until, destination) and redeliver it in parts',
        );
      }
      await record?.(m, moved);
      return moved;
    });
  }
}

/** The store's selection of a filter, its window checked: `until` after `since`. */
function selection(f: OperatorReplayFilter): ReplaySelection {
  if (f.since && f.until && f.until <= f.since) throw invalidProperty('until must be later than since');
  return { partnerId: f.partnerId, companyId: f.companyId, since: f.since, until: f.until, origin: f.destination };
}
