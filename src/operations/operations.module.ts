import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig, moduleFor, PlatformModule } from '../platform/index.js';
import { CallbacksModule } from '../callbacks/index.js';
import { PartnersModule } from '../partners/index.js';
import { CallbackRetention, DEFAULT_RETENTION_INTERVAL_MS, RETENTION_INTERVAL_MS } from './callback-retention.js';
import { HealthController } from './health.controller.js';
import { HealthRepository } from './health.repository.js';
import { Metrics, MetricsController } from './metrics.js';
import { RetentionLockRepository } from './retention-lock.repository.js';

/** What the operator on call reads and relies on, in every role: health, metrics, retention. */
@Module({})
export class OperationsModule {
  static forRoot(config: AppConfig): DynamicModule {
    return moduleFor(OperationsModule, config, {
      imports: [PlatformModule.forRoot(config), CallbacksModule.forRoot(config), PartnersModule.forRoot(config)],
      controllers: { any: [HealthController, MetricsController] },
      // Every role prunes; an advisory lock lets one process at a time do it.
      providers: {
        any: [
          Metrics,
          CallbackRetention,
          RetentionLockRepository,
          HealthRepository,
          { provide: RETENTION_INTERVAL_MS, useValue: DEFAULT_RETENTION_INTERVAL_MS },
        ],
      },
      exports: [Metrics],
    });
  }
}
