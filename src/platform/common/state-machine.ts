import { DomainError } from '../http/domain-error.js';
import { ErrorCode } from '../http/error-codes.js';

/** A state machine as data: the allowed next states of each state. */
export type Transitions<S extends string> = Record<S, readonly S[]>;

export function canTransition<S extends string>(table: Transitions<S>, from: S, to: S): boolean {
  return table[from]?.includes(to) ?? false;
}

/** 409 naming the current status when the state machine forbids the move (every resource's, the credit's too). */
export function assertStatusChange<S extends string>(what: string, table: Transitions<S>, from: S, to: S): void {
  if (!canTransition(table, from, to)) {
    throw new DomainError(
      'conflict',
      ErrorCode.status_transition_not_allowed,
      `${what} cannot become ${to}: its current status is ${from}`,
    );
  }
}
