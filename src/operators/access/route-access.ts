import { applyDecorators } from '@nestjs/common';
import { METHOD_METADATA } from '@nestjs/common/constants.js';
import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants.js';
import { ApiExtension, ApiSecurity } from '@nestjs/swagger';
import { ApiErrors, SECURITY } from '../../platform/index.js';
import { OperatorRole } from './operator-role.js';

/**
 * Who may call a route. Every route declares one where it is defined (a controller's decorator, or
 * the mount of a third-party part: the dashboard, Swagger UI); the access gate checks it on the
 * route Fastify matched, never on the raw URL (docs/security.md).
 * - `anyone`: no credential (health, metrics, source addresses, the API document);
 * - `partner`: a partner's API key (`Bearer`), within the partner rate limit;
 * - `operator`: an operator token (`Bearer`) whose role holds `role`;
 * - `browser-operator`: the same, or HTTP Basic `<name>:<token>`, which a browser remembers: so an
 *   unsafe request from another site is refused whatever it carries (the queue dashboard);
 * - `portal-session`: a partner portal session's cookie (src/portal); without one, a 401 page saying
 *   how to get a sign-in link. Rate limited per partner, apart from its API requests;
 * - `portal-visitor`: no credential, a browser on the portal's sign-in pages: a change (the sign-in
 *   itself) only from the portal's own origin; rate limited per client address.
 */
export type RouteAccess =
  | { to: 'anyone' }
  | { to: 'portal-session' }
  | { to: 'portal-visitor' }
  | { to: 'partner' }
  | { to: 'operator'; role: OperatorRole }
  | { to: 'browser-operator'; role: OperatorRole };

/** The key of a route's access in its Fastify route config. */
export const ACCESS_CONFIG_KEY = 'access';

type Handler = (...args: never[]) => unknown;

/** Sets the access on one route handler, keeping any other route config it has. */
function setHandlerAccess(handler: Handler, access: RouteAccess): void {
  const config =
    (Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) as Record<string, unknown> | undefined) ?? {};
  Reflect.defineMetadata(FASTIFY_ROUTE_CONFIG_METADATA, { ...config, [ACCESS_CONFIG_KEY]: access }, handler);
}

function hasAccess(handler: Handler): boolean {
  const config = Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) as Record<string, unknown> | undefined;
  return config?.[ACCESS_CONFIG_KEY] !== undefined;
}

/**
 * On a route handler: that route's access. On a controller: the access of each of its routes that
 * declares none of its own (class decorators run after the methods').
 */
function declare(access: RouteAccess): ClassDecorator & MethodDecorator {
  return (target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (descriptor) return setHandlerAccess(descriptor.value as Handler, access);
    const proto = (target as { prototype: object }).prototype;
    for (const name of Object.getOwnPropertyNames(proto)) {
      const handler = Object.getOwnPropertyDescriptor(proto, name)?.value as unknown;
      if (typeof handler !== 'function' || Reflect.getMetadata(METHOD_METADATA, handler) === undefined) continue;
      if (!hasAccess(handler as Handler)) setHandlerAccess(handler as Handler, access);
    }
  };
}

/** A route's or a controller's access, with what the OpenAPI document says of it. */
export const Access = {
  /** No credential. */
  anyone: () => declare({ to: 'anyone' }),
  /**
   * A partner portal session's cookie (a page of src/portal): without one, the 401 page; its POSTs
   * carry the session's CSRF token (src/portal/portal-forms.ts).
   */
  portalSession: () => declare({ to: 'portal-session' }),
  /** A browser without a session on the portal's sign-in pages: a change only from the portal's own origin. */
  portalVisitor: () => declare({ to: 'portal-visitor' }),
  /** A partner's API key; 401 without one, 429 over the partner rate limit, 503 without a database. */
  partner: () => applyDecorators(declare({ to: 'partner' }), ApiSecurity(SECURITY.partner), ApiErrors(401, 429, 503)),
  /**
   * An operator token whose role holds `role`: 401 without one, 403 for a known operator below the
   * role (the only 403 of the API: the caller is known). In the document: `x-required-role`.
   */
  operator: (role: OperatorRole) =>
    applyDecorators(
      declare({ to: 'operator', role }),
      ApiSecurity(SECURITY.operator),
      ApiExtension('x-required-role', role),
      ApiErrors(401, 503, { 403: `the operator's role does not allow this: it needs role ${role} or above` }),
    ),
};

/** A route's declared access, as Fastify holds it in the route's config; undefined when it declares none. */
export function accessOf(config: unknown): RouteAccess | undefined {
  return (config as Record<string, RouteAccess | undefined> | undefined)?.[ACCESS_CONFIG_KEY];
}
