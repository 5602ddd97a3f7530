import { applyDecorators, CanActivate, createParamDecorator, ExecutionContext, ForbiddenException, Injectable, SetMetadata, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiExtension } from '@nestjs/swagger';
import { ApiErrors } from '../common/api-doc.js';
import { OperatorCredentials } from './operator-credentials.js';
import { OperatorIdentity, OperatorRole, roleAllows } from './operator-role.js';

const ROLE = 'operator:role';
const AUDIT_ACTION = 'operator:auditAction';

/** The request as the guard sees it, on any HTTP platform. */
type OperatorRequest = { headers: Record<string, string | string[] | undefined>; operator?: OperatorIdentity };

/**
 * The role an /admin route needs (one per route; the guard refuses a route without one). Also in
 * the OpenAPI document: the operation's `x-required-role`, and its 403.
 */
export const RequiresRole = (role: OperatorRole) =>
  applyDecorators(
    SetMetadata(ROLE, role),
    ApiExtension('x-required-role', role),
    ApiErrors({ 403: `the operator's role does not allow this: it needs role ${role} or above` }),
  );

/**
 * The audit action a changing /admin route writes (docs/operations.md lists them all): the
 * handler passes it to its service through {@link CurrentActor}. In the OpenAPI document as the
 * operation's `x-audit-action`.
 */
export const AuditAction = (action: string) => applyDecorators(SetMetadata(AUDIT_ACTION, action), ApiExtension('x-audit-action', action));

/**
 * Every /admin route's one guard: 401 without a valid operator credential, 403 for a known
 * operator whose role is below the route's (the only 403 of the API: the caller is known).
 */
@Injectable()
export class OperatorGuard implements CanActivate {
  constructor(
    private readonly credentials: OperatorCredentials,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const req = ctx.switchToHttp().getRequest<OperatorRequest>();
    const authorization = req.headers.authorization;
    const operator = await this.credentials.bearer(typeof authorization === 'string' ? authorization : undefined);
    if (!operator) throw new UnauthorizedException('A valid operator token is required (Authorization: Bearer <token>)');
    const needed = this.reflector.get<OperatorRole | undefined>(ROLE, ctx.getHandler());
    // A route without a declared role is refused to everyone: forgetting one never opens a route.
    if (!needed) throw new ForbiddenException('This route declares no operator role');
    if (!roleAllows(operator.role, needed)) {
      throw new ForbiddenException(`Operator ${operator.name} has role ${operator.role}; this needs role ${needed} or above`);
    }
    req.operator = operator;
    return true;
  }
}

/** Who makes a change and the audit action it is recorded as. */
export interface Actor {
  operator: OperatorIdentity;
  action: string;
}

/** The authenticated operator and the route's audit action, for the change's audit entry. */
export const CurrentActor = createParamDecorator((_: unknown, ctx: ExecutionContext): Actor => {
  const action = Reflect.getMetadata(AUDIT_ACTION, ctx.getHandler()) as string | undefined;
  if (!action) throw new Error(`${ctx.getClass().name}.${ctx.getHandler().name} takes an actor but declares no @AuditAction`);
  return { operator: ctx.switchToHttp().getRequest<OperatorRequest>().operator!, action };
});
