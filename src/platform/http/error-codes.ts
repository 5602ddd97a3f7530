/**
 * Every refusal's stable code (contract §1): the `code` of every error body, one per rule, the
 * same for the same rule on every route, so that a client branches on the code and never on the
 * message. Each with its meaning, as the OpenAPI document's ErrorResponse and docs/partners.md
 * list them (a test checks both). The names are the contract's style: `snake_case`.
 */
export const ERROR_CODES = {
  invalid_request:
    'a body property, query parameter, header or path id is malformed, unknown or missing; the message names it (400)',
  unauthenticated: 'no credential, or an unknown, revoked or expired one (401)',
  role_insufficient: 'the operator is known but its role does not allow this route (403)',
  cross_site_request:
    'a browser sent a change from another site (Origin or Sec-Fetch-Site): ' +
    'refused whatever credential it carried (403)',
  not_found: 'no such resource, or a resource of another partner (existence is not revealed), or no such route (404)',
  method_not_allowed: 'an action the queue dashboard switched off (405)',
  status_transition_not_allowed: 'the resource cannot change from its current status; the message names it (409)',
  concurrent_changes:
    "other requests changed the resource after each of this change's reads; nothing was written, try again (409)",
  callback_url_removed:
    "the callback's URL was removed by the partner: it cannot be redelivered until a URL is set again (409)",
  test_callback_not_redeliverable: 'a test callback gets one attempt: send a new one (409)',
  destination_not_open: "the destination's circuit is not open: there is nothing to probe (409)",
  operator_name_taken: 'an operator of this name exists; names are never reused (409)',
  operator_revoked: 'the operator is revoked already (409)',
  idempotency_key_in_use: 'a request with this Idempotency-Key is being processed, or its outcome is unknown (409)',
  body_too_large: 'the request body is over 64 KiB (413)',
  idempotency_key_reused: 'the Idempotency-Key was used with another body (422)',
  signature_scheme_unchanged: 'the partner already signs with that scheme (409)',
  client_certificate_unreadable:
    'the certificate, private key or serverCa is not readable PEM; the message names which (422)',
  client_certificate_key_mismatch: "the private key is not the certificate's (422)",
  client_certificate_expired: 'the certificate has expired (422)',
  client_certificate_not_yet_valid: 'the certificate is not valid yet (422)',
  client_certificate_not_for_clients:
    'the certificate may not be used for client authentication (extendedKeyUsage) (422)',
  credit_limit_below_borrowed: 'the credit limit would be below the borrowed amount (422)',
  credit_closed: "the company's credit is closed (422)",
  credit_not_active: "the company's credit is not active (422)",
  insufficient_credit_balance: 'the amount exceeds the credit balance (422)',
  overpayment: "the payment exceeds the loan's outstanding amount (422)",
  replay_over_limit:
    'more than 100,000 failed callbacks match a bulk redelivery: nothing was done; ' +
    'narrow the window (since, until, destination) and replay it in parts (422)',
  url_move_over_limit:
    'more resources use the URL than one move may change: nothing was moved; change them with PATCH (422)',
  test_callback_no_url: 'no URL given, and none registered for that message (422)',
  rate_limited: 'over the partner rate limit; retry after Retry-After seconds (429)',
  test_callback_rate_limited: 'over 10 test callbacks in a rolling minute; retry after Retry-After seconds (429)',
  internal_error: "an unexpected error of the service; nothing to change on the client's side (500)",
  database_unavailable: 'the service cannot reach its database; retry after Retry-After seconds (503)',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * The codes by name (`ErrorCode.insufficient_credit_balance`): a refusal names its code from here,
 * never as a literal.
 */
export const ErrorCode = Object.fromEntries(Object.keys(ERROR_CODES).map((k) => [k, k])) as {
  readonly [K in ErrorCode]: K;
};

/** The code of an answer that carries none of its own (Nest's and Fastify's refusals): by its status. */
export function codeOfStatus(status: number): ErrorCode {
  const byStatus: Record<number, ErrorCode> = {
    400: 'invalid_request',
    401: 'unauthenticated',
    403: 'role_insufficient',
    404: 'not_found',
    405: 'method_not_allowed',
    413: 'body_too_large',
    429: 'rate_limited',
    503: 'database_unavailable',
  };
  return byStatus[status] ?? (status >= 500 ? 'internal_error' : 'invalid_request');
}
