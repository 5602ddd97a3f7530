import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import type { GatedRequest } from './access/access-gate.js';
import type { OperatorIdentity } from './access/operator-role.js';

const AUDIT_ACTION = 'operator:auditAction';

/**
 * The audit action a changing route writes (docs/operations.md lists them all): the
 * handler passes it to its service through {@link CurrentActor}. In the OpenAPI document as the
 * operation's `x-audit-action`.
 */
export const AuditAction = (action: string) =>
  applyDecorators(SetMetadata(AUDIT_ACTION, action), ApiExtension('x-audit-action', action));

/** A partner acting on its own account (its signing key), as the audit log names it. */
export interface PartnerIdentity {
  id: string;
  name: string;
}

/**
 * Who makes a change and the audit action it is recorded as: an operator (every /admin change),
 * or a partner where the contract audits a partner's own change (API §3: rolling its signing key).
 */
export type Actor = { operator: OperatorIdentity; action: string } | { partner: PartnerIdentity; action: string };

/**
 * The operator or partner the access gate let through and the route's audit action, for the
 * change's audit entry.
 */
export const CurrentActor = createParamDecorator((_: unknown, ctx: ExecutionContext): Actor => {
  const where = `${ctx.getClass().name}.${ctx.getHandler().name}`;
  const action = Reflect.getMetadata(AUDIT_ACTION, ctx.getHandler()) as string | undefined;
  if (!action) throw new Error(`${where} takes an actor but declares no @AuditAction`);
  const req = ctx.switchToHttp().getRequest<GatedRequest>();
  if (req.operator) return { operator: req.operator, action };
  const partner = req.partner as PartnerIdentity | undefined;
  if (partner) return { partner: { id: partner.id, name: partner.name }, action };
  throw new Error(`${where} takes an actor but its route lets no operator or partner through`);
});
