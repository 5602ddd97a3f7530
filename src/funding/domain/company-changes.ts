import { Injectable } from '@nestjs/common';
import { CallbackEvent, traced } from '../../callbacks/index.js';
import { notFound, overtaken, TransactionRunner } from '../../platform/index.js';
import { Company } from './company.entity.js';
import { creditEvents, creditSnapshot } from './credit.js';
import { type Actor, AUDIT_ACTIONS, AuditActionName, auditValues, rowChangesAudit } from '../../operators/index.js';
import { CompanyRows } from './company-rows.js';
import { COMPANY } from './change-set.js';
import { changesOf, snapshot } from './tracked-changes.js';

/** A change of a company's own properties (an operator's credit change). */
export interface CompanyChangeSpec {
  id: string;
  /**
   * Its rules: they change the company, may refuse (a DomainError: nothing is written) and return
   * callbacks of their own, recorded before the company's.
   */
  effects: (company: Company) => CallbackEvent[] | void;
  /** The operator making the change: its audit entry is written with it. */
  actor?: Actor;
}

/** Reads of a row a change makes at most while other requests keep changing it, before it answers 409. */
const ROW_CHANGE_TRIES = 50;

/**
 * DomainTransitions' steps for a change of one company row, in two round trips to PostgreSQL,
 * each shared with the changes of other requests under way (OneRowBatches):
 * 1. the row is read, without a lock, with its version;
 * 2. the effects change it (or refuse: nothing is written); its callbacks and audit entry follow
 *    from the tracked properties that changed, as in a transaction's change;
 * 3. one statement — one transaction — writes the row only while it is still the version read,
 *    its callbacks and its audit entry: all of them or nothing. A row another request changed in
 *    between is read and decided again.
 *
 * Why not BEGIN, SELECT … FOR UPDATE, UPDATE, INSERT, INSERT, COMMIT for this one: six round trips
 * for each change, and each costs PostgreSQL and this process tens of microseconds of system CPU
 * (docs/architecture.md, "API path"); the operator's credit change is the API's hot route. Changes
 * that span rows lock the company first in a transaction (DomainTransitions.apply); this write
 * waits for such a lock, and finds its version gone if that transaction changed the row.
 */
@Injectable()
export class CompanyChanges {
  constructor(
    private readonly writes: TransactionRunner,
    private readonly rows: CompanyRows,
  ) {}

  async apply(spec: CompanyChangeSpec): Promise<Company> {
    for (let read = 1; ; read++) {
      const found = await this.rows.read(spec.id);
      if (!found) throw notFound(COMPANY.what);
      const company = found.row;
      const credit = creditSnapshot(company);
      const tracked = snapshot(company, COMPANY.tracked);
      const own = spec.effects(company) ?? [];
      // The trace is taken here, in the request: the batched write runs in another request's.
      const events = traced([...own, ...creditEvents(company, credit)].filter((e) => e.url !== null));
      const changed = changesOf('companies', company.id, tracked, snapshot(company, COMPANY.tracked));
      const audit = spec.actor
        ? auditValues(spec.actor, {
            targetType: AUDIT_ACTIONS[spec.actor.action as AuditActionName],
            targetId: spec.id,
            ...rowChangesAudit(spec.id, changed ? [changed] : []),
          })
        : null;
      // One statement commits the row with its callbacks and audit entry: the one write path's statement form.
      const written = await this.writes.statement(
        () => this.rows.write({ ...found, events, audit }),
        (ok) => (ok ? events.length : 0),
      );
      if (written) return company;
      if (read === ROW_CHANGE_TRIES) throw overtaken(COMPANY.what, read);
    }
  }
}
