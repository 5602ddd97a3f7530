import { CallbackMessage } from '../../callbacks/index.js';
import { StatusResource } from '../domain/resource.js';
import { LimitRequest } from './limit-request.entity.js';
import { LIMIT_REQUEST_TRANSITIONS, LimitRequestStatus } from './limit-request-status.js';

/** A limit request as the transition template sees it. */
export const LIMIT_REQUEST: StatusResource<LimitRequest, LimitRequestStatus> = {
  entity: LimitRequest,
  what: 'Limit request',
  tracked: ['status'],
  transitions: LIMIT_REQUEST_TRANSITIONS,
  statusChanged: (request, company) => ({
    message: CallbackMessage.LimitRequestStatusChanged,
    url: request.statusCallback,
    partnerId: company.partnerId,
    ids: { withdrawalId: null, companyId: company.id, limitRequestId: request.id, loanId: null },
  }),
};
