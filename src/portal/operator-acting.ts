import type { Actor, AuditActionName, PortalIdentity } from '../operators/index.js';

/**
 * The operator who acts in this session, as its audit entries name it with `action`: the one whose
 * link opened it; none in a session the partner's own link opened (not in the operators' audit).
 */
export function operatorActing(session: PortalIdentity, action: AuditActionName): Actor | undefined {
  return session.operator ? { operator: session.operator, action } : undefined;
}
