import { CanActivate, ExecutionContext, Inject, Injectable, NotFoundException, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { APP_CONFIG, ApiVariant, AppConfig } from './app-config.js';

const VARIANT_KEY = 'funding:variant';

/** Marks a controller or route as existing only in one API variant; elsewhere it answers 404. */
export const OnlyVariant = (variant: ApiVariant) => SetMetadata(VARIANT_KEY, variant);

@Injectable()
export class VariantGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  canActivate(ctx: ExecutionContext): boolean {
    const only = this.reflector.getAllAndOverride<ApiVariant | undefined>(VARIANT_KEY, [ctx.getHandler(), ctx.getClass()]);
    if (only && only !== this.config.variant) {
      const req = ctx.switchToHttp().getRequest<Request>();
      // Same answer as a route that does not exist at all.
      throw new NotFoundException(`Cannot ${req.method} ${req.path}`);
    }
    return true;
  }
}
