import { Transitions } from '../../platform/index.js';

/** `pending` until a limit is granted; operators may suspend, reactivate or close credit. */
export const CREDIT_STATUSES = ['pending', 'active', 'suspended', 'closed'] as const;
export type CreditStatus = (typeof CREDIT_STATUSES)[number];

export const CREDIT_TRANSITIONS: Transitions<CreditStatus> = {
  pending: ['active', 'closed'],
  active: ['suspended', 'closed'],
  suspended: ['active', 'closed'],
  closed: [],
};
