import { Inject, Injectable, Provider } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AccessGate, Credentials, OperatorCredentials } from './operators/index.js';
import { PartnersService, PortalSessions, RateLimiter } from './partners/index.js';
import { APP_CONFIG, AppConfig, bearerToken } from './platform/index.js';
import { cookieValues, portalCookie, refusalPage } from './portal/index.js';

/** A worker serves no partner or operator route: it knows no credential. */
const NO_CREDENTIALS: Credentials = {
  partner: () => Promise.resolve(null),
  partnerWithinRate: () => Promise.resolve(false),
  portalWithinRate: () => Promise.resolve(false),
  visitorWithinRate: () => Promise.resolve(false),
  operator: () => Promise.resolve(null),
  operatorOrBasic: () => Promise.resolve(null),
  portalSession: () => Promise.resolve(null),
  portalRefusalPage: () => '',
};

/**
 * The partners' and operators' own credential checks, for the access gate: a partner's API key and
 * rate limits and the portal's session (partners/), an operator's token (operators/).
 */
@Injectable()
export class ServiceCredentials implements Credentials {
  /** The portal session cookie's name. */
  private readonly cookie: string;

  constructor(
    private readonly partners: PartnersService,
    private readonly limiter: RateLimiter,
    private readonly operators: OperatorCredentials,
    private readonly sessions: PortalSessions,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.cookie = portalCookie(config.portalBaseUrl).name;
  }

  async partner(authorization: string | undefined) {
    const key = bearerToken(authorization);
    return key === null ? null : this.partners.authenticate(key);
  }
  partnerWithinRate(partnerId: string) {
    return this.limiter.withinLimit(partnerId);
  }
  portalWithinRate(partnerId: string) {
    return this.limiter.portalWithinLimit(partnerId);
  }
  visitorWithinRate(address: string) {
    return this.limiter.visitorWithinLimit(address);
  }
  operator(authorization: string | undefined) {
    return this.operators.bearer(authorization);
  }
  operatorOrBasic(authorization: string | undefined) {
    return this.operators.bearerOrBasic(authorization);
  }
  portalSession(req: FastifyRequest) {
    return this.sessions.find(cookieValues(req.headers.cookie, this.cookie));
  }
  portalRefusalPage(req: FastifyRequest, status: 401 | 403 | 429, message: string) {
    return refusalPage(req, status, message);
  }
}

/** The access gate of this process's role: the service's credentials, or none in a worker. */
export function accessGateProviders(config: AppConfig): Provider[] {
  if (config.role === 'worker') return [{ provide: AccessGate, useValue: new AccessGate(NO_CREDENTIALS) }];
  const gate = (credentials: ServiceCredentials) => new AccessGate(credentials);
  return [ServiceCredentials, { provide: AccessGate, useFactory: gate, inject: [ServiceCredentials] }];
}
