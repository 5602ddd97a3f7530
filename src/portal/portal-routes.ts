import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Actor, AuditActionName, GatedRequest, PortalIdentity, RouteAccess } from '../operators/index.js';

const SESSION_ACCESS: RouteAccess = { to: 'portal-session' };
const VISITOR_ACCESS: RouteAccess = { to: 'portal-visitor' };
/**
 * Route options declaring a portal route's access (src/operators/access): a session, or a visitor
 * without one (the sign-in pages: a change only from the portal's own origin, limited per address).
 */
export const withSession = { config: { access: SESSION_ACCESS } };
export const asVisitor = { config: { access: VISITOR_ACCESS } };

export type PortalRequest = GatedRequest & { portal: PortalIdentity };

/** A page rendered with the layout's common values (partner name, navigation). */
export type Render = (
  reply: FastifyReply,
  status: number,
  template: string,
  data: Record<string, unknown>,
) => Promise<FastifyReply>;

/** A page saying what was (not) done, with a way back. */
export type Notice = (
  reply: FastifyReply,
  status: number,
  title: string,
  message: string,
  back?: { href: string; label: string },
) => Promise<FastifyReply>;

/**
 * The operator who acts in this session, as its audit entries name it with `action`: the one whose
 * link opened it; none in a session the partner's own link opened (not in the operators' audit).
 */
export function operatorActing(req: FastifyRequest, action: AuditActionName): Actor | undefined {
  const operator = (req as PortalRequest).portal.operator;
  return operator ? { operator, action } : undefined;
}
