import type { FastifyInstance, onRequestAsyncHookHandler, RouteOptions } from 'fastify';
import { AccessGate } from './access-gate.js';
import { accessOf, RouteAccess } from './route-access.js';

/**
 * The access of the routes a third-party part registers under one path (the queue dashboard,
 * Swagger UI), declared where that part is mounted: every route under `prefix` (the path itself,
 * or below it) that declares none of its own.
 */
export interface MountAccess {
  prefix: string;
  access: (method: string) => RouteAccess;
}

/** Whether a route's path is the mount's or below it (as declared, not as requested). */
const under = (url: string, prefix: string) => url === prefix || url.startsWith(`${prefix}/`);

/**
 * Puts every route Fastify registers from now on behind the access gate: the route's access is
 * the one it declares (`Access` on its controller or handler, kept in its route config) or its
 * mount's; a route with neither stops the start ("declares no access"), so a forgotten
 * declaration never opens a route. The gate runs as the route's own first `onRequest` hook: on
 * the route Fastify matched, whatever spelling of its path the request used.
 */
export function installRouteAccess(instance: FastifyInstance, gate: AccessGate, mounts: MountAccess[]): void {
  instance.addHook('onRoute', (route: RouteOptions) => {
    const methods = [route.method].flat();
    const declared = accessOf(route.config);
    const mount = mounts.find((m) => under(route.url, m.prefix));
    const [access, ...others] = methods.map((m) => declared ?? mount?.access(m));
    if (!access)
      throw new Error(
        `route ${methods.join(',')} ${route.url} declares no access: ` +
          'give its handler or controller an @Access decorator',
      );
    if (others.some((a) => JSON.stringify(a) !== JSON.stringify(access))) {
      throw new Error(
        `route ${methods.join(',')} ${route.url} has methods of different access: declare them as separate routes`,
      );
    }
    route.config = { ...(route.config as object), access };
    const check: onRequestAsyncHookHandler = (req, reply) => gate.check(access, req, reply);
    // A new array: Fastify's HEAD route for a GET starts from a copy of the same options.
    route.onRequest = [check, ...[route.onRequest ?? []].flat()];
  });
}
