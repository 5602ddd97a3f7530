// operators/: operators, roles, the audit log, and the access gate (access declared per route).
// The public face of the module: other modules import only this file (.dependency-cruiser.cjs).
export { AccessGate } from './access/access-gate.js';
export type { Credentials, GatedRequest, PortalIdentity } from './access/access-gate.js';
export { CREDENTIAL_CLOCK, CredentialCache } from './access/credential-cache.js';
export type { MonotonicClock } from './access/credential-cache.js';
export type { OperatorIdentity } from './access/operator-role.js';
export { installRouteAccess } from './access/route-access-hook.js';
export type { MountAccess } from './access/route-access-hook.js';
export { Access } from './access/route-access.js';
export type { RouteAccess } from './access/route-access.js';
export { AuditAction, CurrentActor } from './actor.js';
export type { Actor } from './actor.js';
export { AUDIT_ACTIONS } from './audit/audit-actions.js';
export type { AuditActionName } from './audit/audit-actions.js';
export { rowChangesAudit, trackedValues } from './audit/audit-changes.js';
export type { Tracked } from './audit/audit-changes.js';
export { AUDIT_LOG_PROVIDERS, AuditLog, auditValues } from './audit/audit-log.js';
export type { AuditChange, OwnedAuditEntry } from './audit/audit-log.js';
export { OperatorCredentials } from './operator-credentials.js';
export { Operator } from './operator.entity.js';
export { OperatorsModule } from './operators.module.js';
