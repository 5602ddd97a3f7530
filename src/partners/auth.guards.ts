import { CanActivate, createParamDecorator, ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { bearerToken } from './partner-secrets.js';
import { Partner } from './partner.entity.js';
import { PartnersService } from './partners.service.js';
import { RateLimiter } from './rate-limiter.js';

type AuthedRequest = FastifyRequest & { partner?: Partner };

@Injectable()
export class PartnerGuard implements CanActivate {
  constructor(
    private readonly partners: PartnersService,
    private readonly limiter: RateLimiter,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const req = ctx.switchToHttp().getRequest<AuthedRequest>();
    const key = bearerToken(req.headers.authorization);
    const partner = key ? await this.partners.authenticate(key) : null;
    if (!partner) throw new UnauthorizedException('A valid partner API key is required (Authorization: Bearer <apiKey>)');
    try {
      await this.limiter.check(partner.id);
    } catch (e) {
      ctx.switchToHttp().getResponse<FastifyReply>().header('Retry-After', '1');
      throw e;
    }
    req.partner = partner;
    return true;
  }
}

export const CurrentPartner = createParamDecorator((_: unknown, ctx: ExecutionContext): Partner => {
  return ctx.switchToHttp().getRequest<AuthedRequest>().partner!;
});
