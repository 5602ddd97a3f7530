import { Transitions } from '../../platform/index.js';

// `canceled` with one "l" is the specification's spelling for limit requests (withdrawal
// requests use `cancelled`); partners match on these strings, so both stay as specified.
export const LIMIT_REQUEST_STATUSES = ['pending', 'approved', 'rejected', 'canceled'] as const;
export type LimitRequestStatus = (typeof LIMIT_REQUEST_STATUSES)[number];

export const LIMIT_REQUEST_TRANSITIONS: Transitions<LimitRequestStatus> = {
  pending: ['approved', 'rejected', 'canceled'],
  approved: [],
  rejected: [],
  canceled: [],
};
