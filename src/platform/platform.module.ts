import { DynamicModule, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { DataSourceOptions } from 'typeorm';
import { APP_CONFIG, AppConfig } from './config/app-config.js';
import { moduleFor } from './config/module-parts.js';
import { LockedRows } from './common/locked-rows.repository.js';
import { SecretBox } from './crypto/secret-box.js';
import { AdmissionSignal } from './database/admission-signal.js';
import { openDatabase } from './database/database.js';
import { createRedis, REDIS, RedisConnection } from './database/redis.js';
import { SqlPool } from './database/sql-pool.js';
import { WakeUpRepository } from './database/wake-up.repository.js';
import { AFTER_COMMIT, TransactionRunner } from './database/transaction-runner.js';
import { DomainErrorFilter } from './http/domain-error.js';
import { IdempotencyKeyRepository, IdempotencyPruning } from './idempotency/idempotency-key.repository.js';
import { UnexpectedErrorFilter } from './http/unexpected-error.filter.js';

/** Closes the shared Redis connection when the app shuts down. */
@Injectable()
class RedisCloser implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: RedisConnection) {}
  async onApplicationShutdown() {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

/**
 * What every module stands on: the configuration, the hand-written SQL's pool, Redis, the write
 * path (commit, then wake admission), sealing, and the error filters. The database itself (TypeORM's
 * data source, which Writes uses) is the application's: {@link databaseModule}.
 */
@Module({})
export class PlatformModule {
  static forRoot(config: AppConfig): DynamicModule {
    return moduleFor(PlatformModule, config, {
      providers: {
        any: [
          { provide: APP_CONFIG, useValue: config },
          { provide: REDIS, useFactory: () => createRedis(config.redisUrl, `${config.queuePrefix}-app`) },
          RedisCloser,
          // The connections of the hand-written SQL, every role's.
          SqlPool,
          { provide: SecretBox, useValue: new SecretBox(config.secretsKeys) },
          // Both roles wake admission: commits and redeliveries (api), settlements (worker).
          AdmissionSignal,
          WakeUpRepository,
          // The idempotency keys' statements: every API route's interceptor, and the retention pass.
          IdempotencyKeyRepository,
          IdempotencyPruning,
          { provide: APP_FILTER, useClass: UnexpectedErrorFilter },
          { provide: APP_FILTER, useClass: DomainErrorFilter },
        ],
        api: [TransactionRunner, LockedRows, { provide: AFTER_COMMIT, useExisting: AdmissionSignal }],
      },
      exports: [
        APP_CONFIG,
        REDIS,
        SqlPool,
        SecretBox,
        AdmissionSignal,
        TransactionRunner,
        LockedRows,
        IdempotencyKeyRepository,
        IdempotencyPruning,
      ],
    });
  }
}

/**
 * The application's PostgreSQL through TypeORM, imported once at the root (TypeORM makes its data
 * source visible to every module). `dataSource` names the entities: the features' tables, which
 * the platform does not know.
 */
export function databaseModule(
  config: AppConfig,
  dataSource: (databaseUrl: string) => DataSourceOptions,
): DynamicModule {
  return TypeOrmModule.forRootAsync({
    useFactory: () => ({ ...dataSource(config.databaseUrl), retryAttempts: 2, retryDelay: 1000 }),
    dataSourceFactory: (options) => openDatabase(options!, config.secretsKeys),
  });
}
