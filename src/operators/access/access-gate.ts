import type { FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode, UnexpectedErrorAnswer } from '../../platform/index.js';
import { OperatorIdentity, roleAllows } from './operator-role.js';
import { RouteAccess } from './route-access.js';

/**
 * The credential checks the gate asks (the partners' and operators' own: PartnersService,
 * RateLimiter, OperatorCredentials), given to it where the application is put together.
 */
export interface Credentials {
  /** The partner of an `Authorization: Bearer <apiKey>` header, or null. */
  partner(authorization: string | undefined): Promise<{ id: string } | null>;
  /** Whether the partner is within its rate limit (this request counted). */
  partnerWithinRate(partnerId: string): Promise<boolean>;
  /** Whether the partner's portal sessions are within their rate limit (this request counted). */
  portalWithinRate(partnerId: string): Promise<boolean>;
  /** Whether portal requests without a session from this client address are within their rate limit. */
  visitorWithinRate(address: string): Promise<boolean>;
  /** The operator of an `Authorization: Bearer <token>` header, or null. */
  operator(authorization: string | undefined): Promise<OperatorIdentity | null>;
  /** The same, or HTTP Basic `<name>:<token>` (what a browser sends), or null. */
  operatorOrBasic(authorization: string | undefined): Promise<OperatorIdentity | null>;
  /** The live partner portal session of the request's cookie, or null. */
  portalSession(req: FastifyRequest): Promise<PortalIdentity | null>;
  /** The page a browser gets for a refusal under /portal: without a session (401), how to get a sign-in link. */
  portalRefusalPage(req: FastifyRequest, status: 401 | 403 | 429, message: string): string;
}

/** A portal session as the gate lets it through: whose it is, for the portal's handlers. */
export interface PortalIdentity {
  id: string;
  partnerId: string;
  csrfSecret: string;
  /** The operator whose link opened the session (its actions are audited naming it), or null. */
  operator: OperatorIdentity | null;
}

/** The request once the gate let it through: who it is, for the route's handler. */
export type GatedRequest = FastifyRequest & { partner?: unknown; operator?: OperatorIdentity; portal?: PortalIdentity };

/** Methods that change nothing (RFC 9110 "safe"): a browser may send them from any site. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether a browser sent this request from another site: its `Sec-Fetch-Site` says so, or (an
 * older browser) its `Origin` is not this host. A client that is not a browser sends neither.
 */
export function fromAnotherSite(headers: FastifyRequest['headers']): boolean {
  const site = headers['sec-fetch-site'];
  if (typeof site === 'string') return site !== 'same-origin' && site !== 'none';
  const origin = headers.origin;
  if (origin === undefined) return false;
  try {
    return new URL(String(origin)).host !== headers.host;
  } catch {
    return true; // `Origin: null` (a sandboxed or privacy-sensitive context) and anything unreadable
  }
}

/**
 * Whether a browser says it sent this request from this service's own origin: `Sec-Fetch-Site:
 * same-origin`, or (a browser that does not send it) an `Origin` whose host is this `Host`.
 * Stricter than the negation of {@link fromAnotherSite}: a request that says nothing is not.
 */
export function fromThisSite(headers: FastifyRequest['headers']): boolean {
  const site = headers['sec-fetch-site'];
  if (typeof site === 'string') return site === 'same-origin';
  if (typeof headers.origin !== 'string') return false;
  try {
    return new URL(headers.origin).host === headers.host?.toLowerCase();
  } catch {
    return false;
  }
}

const BASIC_CHALLENGE = { 'WWW-Authenticate': 'Basic realm="funding-service", charset="UTF-8"' };

interface Refusal {
  status: 401 | 403 | 429;
  code: ErrorCode;
  message: string;
  headers?: Record<string, string>;
}

const ERROR_NAMES = { 401: 'Unauthorized', 403: 'Forbidden', 429: 'Too Many Requests' } as const;

/** Over a rate limit: the counts are per second, so the next second's window is open. */
const TOO_MANY: Refusal = {
  status: 429,
  code: ErrorCode.rate_limited,
  message: 'Rate limit of requests per second exceeded; retry after the Retry-After delay',
  headers: { 'Retry-After': '1' },
};

/** The routes that answer a browser's page, not the API's JSON: the partner portal's. */
const PAGES = new Set<RouteAccess['to']>(['portal-session', 'portal-visitor']);

/**
 * The one check of who may call a route, run by Fastify before the route's handler on every route
 * (route-access-hook.ts): on the route Fastify matched, so no spelling of a path reaches a route
 * without its check. A refusal is answered here, in the one error shape; a request let through
 * carries its partner or operator for the handler.
 */
export class AccessGate {
  private readonly unexpected = new UnexpectedErrorAnswer();

  constructor(private readonly credentials: Credentials) {}

  /** Nothing when the request may go on; the reply, answered, when it may not (Fastify's hook contract). */
  async check(access: RouteAccess, req: GatedRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    try {
      const refusal = await this.refusal(access, req);
      if (!refusal) return undefined;
      const { status, code, message, headers } = refusal;
      reply.status(status).headers(headers ?? {});
      // A browser's page: the portal answers its refusals as pages, not as the API's JSON.
      if (PAGES.has(access.to)) {
        return reply.type('text/html; charset=utf-8').send(this.credentials.portalRefusalPage(req, status, message));
      }
      return reply.send({ statusCode: status, error: ERROR_NAMES[status], message, code });
    } catch (e) {
      this.unexpected.send(e, reply);
      return reply;
    }
  }

  private async refusal(access: RouteAccess, req: GatedRequest): Promise<Refusal | null> {
    if (access.to === 'anyone') return null;
    if (access.to === 'portal-visitor') return this.visitor(req);
    if (!SAFE_METHODS.has(req.method) && fromAnotherSite(req.headers)) {
      return {
        status: 403,
        code: ErrorCode.cross_site_request,
        message:
          'A request from another site cannot change anything here (its Origin or Sec-Fetch-Site is not this service)',
      };
    }
    if (access.to === 'portal-session') return this.portal(req);
    const authorization = req.headers.authorization;
    if (access.to === 'partner') return this.partner(req, authorization);
    const browser = access.to === 'browser-operator';
    const operator = browser
      ? await this.credentials.operatorOrBasic(authorization)
      : await this.credentials.operator(authorization);
    if (!operator) {
      return browser
        ? {
            status: 401,
            code: ErrorCode.unauthenticated,
            message: 'Operator credentials are required (Bearer <token>, or Basic <operator name>:<token>)',
            headers: BASIC_CHALLENGE,
          }
        : {
            status: 401,
            code: ErrorCode.unauthenticated,
            message: 'A valid operator token is required (Authorization: Bearer <token>)',
          };
    }
    if (!roleAllows(operator.role, access.role)) {
      return {
        status: 403,
        code: ErrorCode.role_insufficient,
        message: `Operator ${operator.name} has role ${operator.role}; this needs role ${access.role} or above`,
      };
    }
    req.operator = operator;
    return null;
  }

  /**
   * A browser without a session (the portal's sign-in): a change only from the portal's own page,
   * not merely from no other site (a sign-in is what another site would force); limited per address.
   */
  private async visitor(req: GatedRequest): Promise<Refusal | null> {
    if (!SAFE_METHODS.has(req.method) && !fromThisSite(req.headers)) {
      const message =
        "A sign-in is sent from the portal's own page (this request's Origin or Sec-Fetch-Site says " +
        'it was not): nothing was used';
      return { status: 403, code: ErrorCode.cross_site_request, message };
    }
    return this.visitorRate(req);
  }

  private async visitorRate(req: GatedRequest): Promise<Refusal | null> {
    return (await this.credentials.visitorWithinRate(req.ip)) ? null : TOO_MANY;
  }

  /** A portal session's cookie; without one, limited as a visitor; with one, as its partner's sessions. */
  private async portal(req: GatedRequest): Promise<Refusal | null> {
    const session = await this.credentials.portalSession(req);
    if (!session) {
      const message = 'A portal session is required: follow a sign-in link';
      return (await this.visitorRate(req)) ?? { status: 401, code: ErrorCode.unauthenticated, message };
    }
    if (!(await this.credentials.portalWithinRate(session.partnerId))) return TOO_MANY;
    req.portal = session;
    return null;
  }

  private async partner(req: GatedRequest, authorization: string | undefined): Promise<Refusal | null> {
    const partner = await this.credentials.partner(authorization);
    if (!partner)
      return {
        status: 401,
        code: ErrorCode.unauthenticated,
        message: 'A valid partner API key is required (Authorization: Bearer <apiKey>)',
      };
    if (!(await this.credentials.partnerWithinRate(partner.id))) return TOO_MANY;
    req.partner = partner;
    return null;
  }
}
