/**
 * Every audit action, by the kind of resource it changes: the stable dotted names an entry's
 * `action` takes. Each changing /admin route declares its own (`@AuditAction`, the OpenAPI
 * document's `x-audit-action`); docs/operations.md lists them all, and a test checks both.
 * `portal.*`: what an operator does in a partner portal session its link opened (src/portal).
 */
export const AUDIT_ACTIONS = {
  'partner.create': 'partner',
  'partner.signing-secret.rotate': 'partner',
  'partner.api-key.rotate': 'partner',
  'partner.signature-scheme.switch': 'partner',
  'partner.client-certificate.set': 'partner',
  'partner.client-certificate.delete': 'partner',
  'partner.portal-link.create': 'partner',
  'partner.portal-sessions.end': 'partner',
  'operator.create': 'operator',
  'operator.revoke': 'operator',
  'operator.bootstrap': 'operator',
  'company.credit.update': 'company',
  'limit-request.approve': 'limit-request',
  'limit-request.reject': 'limit-request',
  'withdrawal-request.accept': 'withdrawal-request',
  'withdrawal-request.reject': 'withdrawal-request',
  'withdrawal-request.pay-out': 'withdrawal-request',
  'loan.payment.register': 'loan',
  'callback.redeliver': 'callback',
  'callback.redeliver-failed': 'callback',
  'callback.promote': 'callback',
  'destination.probe': 'destination',
  'portal.session.open': 'partner',
  'portal.session.end': 'partner',
  'portal.callback.redeliver': 'callback',
  'portal.callback.redeliver-failed': 'callback',
  'portal.test-callback.send': 'callback',
  'portal.operations-url.set': 'partner',
  'portal.test-event.send': 'partner',
  'portal.callback-urls.move': 'partner',
  'portal.signing-secret.rotate': 'partner',
  'portal.signature-scheme.switch': 'partner',
} as const;

export type AuditActionName = keyof typeof AUDIT_ACTIONS;
export const AUDIT_TARGET_TYPES = [...new Set(Object.values(AUDIT_ACTIONS))];
export type AuditTargetType = (typeof AUDIT_ACTIONS)[AuditActionName];
