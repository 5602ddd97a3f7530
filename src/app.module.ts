import { DynamicModule, Module } from '@nestjs/common';
import { CallbacksModule } from './callbacks/index.js';
import { accessGateProviders } from './credentials.js';
import { dataSourceOptions } from './data-source.js';
import { DeliveryModule } from './delivery/index.js';
import { EgressModule } from './egress/index.js';
import { FundingModule } from './funding/index.js';
import { OperationsModule } from './operations/index.js';
import { OperatorsModule } from './operators/index.js';
import { PartnersModule } from './partners/index.js';
import { AppConfig, databaseModule, PlatformModule } from './platform/index.js';
import { PortalModule } from './portal/index.js';

@Module({})
export class AppModule {
  /**
   * The whole service, built from one parsed configuration (tests pass their own). ROLE picks
   * each module's parts: `api` serves the HTTP API and runs the outbox relay, `worker` delivers
   * (and serves only /health, /ready and /metrics), `all` does both. Listed bottom layer first
   * (docs/architecture.md, "Modules"); each imports the modules it uses, the platform among them.
   */
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        databaseModule(config, dataSourceOptions),
        PlatformModule.forRoot(config),
        EgressModule.forRoot(config),
        OperatorsModule.forRoot(config),
        PartnersModule.forRoot(config),
        CallbacksModule.forRoot(config),
        OperationsModule.forRoot(config),
        DeliveryModule.forRoot(config),
        FundingModule.forRoot(config),
        PortalModule.forRoot(config),
      ],
      // The access gate every route is behind (setup-app.ts installs it first).
      providers: accessGateProviders(config),
    };
  }
}
