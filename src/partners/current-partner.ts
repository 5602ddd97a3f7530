import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { GatedRequest } from '../operators/index.js';
import { Partner } from './partner.entity.js';

/** The partner the access gate let through (a route declared `Access.partner()`). */
export const CurrentPartner = createParamDecorator((_: unknown, ctx: ExecutionContext): Partner => {
  const partner = ctx.switchToHttp().getRequest<GatedRequest>().partner;
  if (!partner)
    throw new Error(
      `${ctx.getClass().name}.${ctx.getHandler().name} takes a partner but its route lets no partner through`,
    );
  return partner as Partner;
});
