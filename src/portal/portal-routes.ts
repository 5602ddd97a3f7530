import type { FastifyReply } from 'fastify';
import type { GatedRequest, PortalIdentity, RouteAccess } from '../operators/index.js';

const SESSION_ACCESS: RouteAccess = { to: 'portal-session' };
const PUBLIC_ACCESS: RouteAccess = { to: 'anyone' };
/** Route options declaring a portal route's access (src/operators/access): a session, or none for the sign-in pages. */
export const withSession = { config: { access: SESSION_ACCESS } };
export const withoutSession = { config: { access: PUBLIC_ACCESS } };

export type PortalRequest = GatedRequest & { portal: PortalIdentity };

/** A page rendered with the layout's common values (partner name, navigation). */
export type Render = (reply: FastifyReply, status: number, template: string, data: Record<string, unknown>) => Promise<FastifyReply>;

