/**
 * Every stable refusal code the service gives, `<RESOURCE>.<REASON>` (domain-driven-hexagon's
 * style), in one place so that a code is never spelt twice. A resource's `NOT_FOUND` and
 * `CONCURRENT_CHANGES` are made from its name (`notFound`, `overtaken` in domain-error.ts).
 */
export const ErrorCode = {
  RequestInvalid: 'REQUEST.INVALID',
  CreditIllegalTransition: 'CREDIT.ILLEGAL_TRANSITION',
  CreditLimitBelowBorrowed: 'CREDIT.LIMIT_BELOW_BORROWED',
  LimitRequestCreditClosed: 'LIMIT_REQUEST.CREDIT_CLOSED',
  LimitRequestIllegalTransition: 'LIMIT_REQUEST.ILLEGAL_TRANSITION',
  WithdrawalCreditNotActive: 'WITHDRAWAL.CREDIT_NOT_ACTIVE',
  WithdrawalInsufficientCreditBalance: 'WITHDRAWAL.INSUFFICIENT_CREDIT_BALANCE',
  WithdrawalIllegalTransition: 'WITHDRAWAL.ILLEGAL_TRANSITION',
  LoanOverpayment: 'LOAN.OVERPAYMENT',
  CallbackStillPending: 'CALLBACK.STILL_PENDING',
  CallbackUrlRemoved: 'CALLBACK.URL_REMOVED',
  TestCallbackNoUrl: 'TEST_CALLBACK.NO_URL',
  TestCallbackRateLimited: 'TEST_CALLBACK.RATE_LIMITED',
  TestCallbackNotRedeliverable: 'TEST_CALLBACK.NOT_REDELIVERABLE',
  DestinationNotOpen: 'DESTINATION.NOT_OPEN',
  OperatorNameTaken: 'OPERATOR.NAME_TAKEN',
  OperatorRevoked: 'OPERATOR.REVOKED',
  PartnerSignatureSchemeUnchanged: 'PARTNER.SIGNATURE_SCHEME_UNCHANGED',
  ClientCertificateUnreadable: 'CLIENT_CERTIFICATE.UNREADABLE',
  ClientCertificateKeyMismatch: 'CLIENT_CERTIFICATE.KEY_MISMATCH',
  ClientCertificateExpired: 'CLIENT_CERTIFICATE.EXPIRED',
  ClientCertificateNotYetValid: 'CLIENT_CERTIFICATE.NOT_YET_VALID',
  ClientCertificateNotForClients: 'CLIENT_CERTIFICATE.NOT_FOR_CLIENT_AUTH',
} as const;

/** A code from the list above, or one made from a resource's name. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode] | `${string}.NOT_FOUND` | `${string}.CONCURRENT_CHANGES`;
