import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import type { GatedRequest } from './access/access-gate.js';
import type { OperatorIdentity } from './access/operator-role.js';

const AUDIT_ACTION = 'operator:auditAction';

/**
 * The audit action a changing /admin route writes (docs/operations.md lists them all): the
 * handler passes it to its service through {@link CurrentActor}. In the OpenAPI document as the
 * operation's `x-audit-action`.
 */
export const AuditAction = (action: string) => applyDecorators(SetMetadata(AUDIT_ACTION, action), ApiExtension('x-audit-action', action));

/** Who makes a change and the audit action it is recorded as. */
export interface Actor {
  operator: OperatorIdentity;
  action: string;
}

/** The operator the access gate let through and the route's audit action, for the change's audit entry. */
export const CurrentActor = createParamDecorator((_: unknown, ctx: ExecutionContext): Actor => {
  const action = Reflect.getMetadata(AUDIT_ACTION, ctx.getHandler()) as string | undefined;
  if (!action) throw new Error(`${ctx.getClass().name}.${ctx.getHandler().name} takes an actor but declares no @AuditAction`);
  const operator = ctx.switchToHttp().getRequest<GatedRequest>().operator;
  if (!operator) throw new Error(`${ctx.getClass().name}.${ctx.getHandler().name} takes an actor but its route lets no operator through`);
  return { operator, action };
});
