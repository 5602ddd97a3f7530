import { CREDIT_STATUSES, CREDIT_TRANSITIONS } from './credit-status.js';
import { LIMIT_REQUEST_STATUSES, LIMIT_REQUEST_TRANSITIONS } from '../limit-requests/limit-request-status.js';
import { WITHDRAWAL_STATUSES, WITHDRAWAL_TRANSITIONS } from '../withdrawals/withdrawal-status.js';
import { canTransition, Transitions } from '../../platform/common/state-machine.js';

/** Every from→to pair of a machine, with whether the contract allows it. */
function pairs<S extends string>(statuses: readonly S[], allowed: [S, S][]) {
  const ok = new Set(allowed.map(([a, b]) => `${a}>${b}`));
  return statuses.flatMap((from) => statuses.map((to) => [from, to, ok.has(`${from}>${to}`)] as [S, S, boolean]));
}

function check<S extends string>(table: Transitions<S>, rows: [S, S, boolean][]) {
  it.each(rows)('%s → %s allowed: %s', (from, to, expected) => {
    expect(canTransition(table, from, to)).toBe(expected);
  });
}

describe('limit request state machine (docs/partners.md, "Statuses")', () => {
  check(
    LIMIT_REQUEST_TRANSITIONS,
    pairs(LIMIT_REQUEST_STATUSES, [
      ['pending', 'approved'],
      ['pending', 'rejected'],
      ['pending', 'canceled'],
    ]),
  );
});

describe('withdrawal request state machine (docs/partners.md, "Statuses")', () => {
  check(
    WITHDRAWAL_TRANSITIONS,
    pairs(WITHDRAWAL_STATUSES, [
      ['created', 'accepted'],
      ['created', 'rejected'],
      ['created', 'cancelled'],
      ['accepted', 'paid_out'],
      ['accepted', 'cancelled'],
      ['paid_out', 'repaid'],
    ]),
  );
});

describe('credit status state machine', () => {
  check(
    CREDIT_TRANSITIONS,
    pairs(CREDIT_STATUSES, [
      ['pending', 'active'],
      ['pending', 'closed'],
      ['active', 'suspended'],
      ['active', 'closed'],
      ['suspended', 'active'],
      ['suspended', 'closed'],
    ]),
  );
});
