import { CallbackMessage } from '../../callbacks/index.js';
import type { RequestResource } from '../company-requests/company-requests.service.js';
import { LimitRequest } from './limit-request.entity.js';
import { LIMIT_REQUEST_TRANSITIONS, LimitRequestStatus } from './limit-request-status.js';

/** A limit request as the transition template sees it. */
export const LIMIT_REQUEST: RequestResource<LimitRequest, LimitRequestStatus> = {
  entity: LimitRequest,
  what: 'Limit request',
  tracked: ['status'],
  transitions: LIMIT_REQUEST_TRANSITIONS,
  cancelled: 'canceled',
  rejected: 'rejected',
  statusChanged: (request, company) => ({
    message: CallbackMessage.LimitRequestStatusChanged,
    url: request.statusCallback,
    partnerId: company.partnerId,
    ids: { withdrawalId: null, companyId: company.id, limitRequestId: request.id, loanId: null },
  }),
};
