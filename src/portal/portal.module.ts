import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig, moduleFor } from '../platform/index.js';
import { PortalServices } from './portal-services.js';

/** The partner portal: server-rendered pages over the partner's own data, mounted by setup-app.ts. */
@Module({})
export class PortalModule {
  static forRoot(config: AppConfig): DynamicModule {
    return moduleFor(PortalModule, config, { providers: { api: [PortalServices] }, exports: [PortalServices] });
  }
}
