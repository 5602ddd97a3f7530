import { Transitions } from '../../platform/index.js';

// `cancelled` with two "l"s, as the specification spells it for withdrawal requests. The list
// is open-ended for clients; `repaid` is reached only automatically, when the loan is paid.
export const WITHDRAWAL_STATUSES = ['created', 'accepted', 'rejected', 'cancelled', 'paid_out', 'repaid'] as const;
export type WithdrawalStatus = (typeof WITHDRAWAL_STATUSES)[number];

export const WITHDRAWAL_TRANSITIONS: Transitions<WithdrawalStatus> = {
  created: ['accepted', 'rejected', 'cancelled'],
  accepted: ['paid_out', 'cancelled'],
  paid_out: ['repaid'],
  rejected: [],
  cancelled: [],
  repaid: [],
};
