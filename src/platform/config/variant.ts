import type { ApiVariant } from './app-config.js';

/** Everything that differs between the specification's variants A and B, in one table. */
export interface VariantNames {
  /** Property holding the organization callback URL. */
  companyCallbackProperty: 'callback' | 'status_callback';
  /** Collection segment of withdrawal requests under a company. */
  withdrawalsSegment: 'withdrawal-requests' | 'withdrawal';
  /** Whether GET /v1/companies/{id}/terms exists. */
  hasTerms: boolean;
}

export const VARIANTS: Record<ApiVariant, VariantNames> = {
  A: { companyCallbackProperty: 'callback', withdrawalsSegment: 'withdrawal-requests', hasTerms: false },
  B: { companyCallbackProperty: 'status_callback', withdrawalsSegment: 'withdrawal', hasTerms: true },
};
