import Tokens from '@fastify/csrf';
import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { GatedRequest, PortalIdentity, RouteAccess } from '../operators/index.js';
import { single } from './portal-format.js';

/** A form POST without its session's valid token: refused (403), nothing read or done. */
export class FormTokenRefused extends Error {}

/** Methods that change nothing: no form token needed. */
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The portal forms' synchronizer tokens (CSRF): made and checked by @fastify/csrf (the token scheme
 * of @fastify/csrf-protection) with a secret kept in the session's row, so a token is good for its
 * session only, and never for another's.
 */
@Injectable()
export class PortalForms {
  private readonly tokens = new Tokens({ userInfo: false });

  /** A token for the session's forms (a page's hidden `_csrf` field). */
  tokenFor(session: PortalIdentity): string {
    return this.tokens.create(session.csrfSecret);
  }

  valid(session: PortalIdentity, token: string | undefined): boolean {
    return token !== undefined && this.tokens.verify(session.csrfSecret, token);
  }
}

/**
 * Every unsafe request to a route declaring `portal-session` access carries its session's form
 * token (`_csrf`), or is refused before its handler runs: decided by the route's declared access
 * (route-access.ts), so no portal action can leave it out. The sign-in's POST (`portal-visitor`)
 * has no session: the access gate lets it through from the portal's own origin only.
 */
@Injectable()
export class PortalFormGuard implements CanActivate {
  constructor(private readonly forms: PortalForms) {}

  canActivate(ctx: ExecutionContext): boolean {
    const req = ctx.switchToHttp().getRequest<GatedRequest>();
    const access = (req.routeOptions.config as { access?: RouteAccess }).access;
    if (SAFE.has(req.method) || access?.to !== 'portal-session') return true;
    const token = single((req.body ?? {}) as Record<string, unknown>, '_csrf');
    if (!req.portal || !this.forms.valid(req.portal, token)) throw new FormTokenRefused();
    return true;
  }
}
