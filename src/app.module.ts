import { DynamicModule, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import dns from 'node:dns';
import { Admission } from './delivery/admission.js';
import { AdmissionSignal } from './delivery/admission-signal.js';
import { CallbackDelivery } from './delivery/callback-delivery.js';
import { CallbackQueue } from './delivery/callback-queue.js';
import { DeliveryWorker } from './delivery/delivery-worker.js';
import { Settlement } from './delivery/settlement.js';
import { CallbackRecorder } from './callbacks/callback-recorder.js';
import { CompanyChanges } from './funding/domain/company-changes.js';
import { ADMISSION_INTERVAL, ADMISSION_INTERVAL_MS, CallbackRelay } from './delivery/callback-relay.js';
import { CallbackSender, DNS_LOOKUP } from './egress/callback-sender.js';
import { CallbackUrlValidator } from './egress/callback-url.validator.js';
import { CallbacksAdminController } from './callbacks/callbacks-admin.controller.js';
import { CallbackReads } from './callbacks/callback-reads.js';
import { CallbackRepairs } from './callbacks/callback-repairs.js';
import { Redelivery } from './callbacks/redelivery.js';
import { BulkReplay, DEFAULT_REPLAY_LIMIT, REPLAY_LIMIT } from './callbacks/bulk-replay.js';
import { PartnerEventsAdminController, PartnerEventsController } from './callbacks/operational-events/operational-events.controllers.js';
import { OperationalEvents } from './callbacks/operational-events/operational-events.service.js';
import { AFTER_COMMIT, Writes } from './platform/database/writes.js';
import { CallbacksController } from './callbacks/callbacks.controller.js';
import { CallbackFeedController } from './callbacks/callback-feed.controller.js';
import { CallbackFeed } from './callbacks/callback-feed.service.js';
import { CompanyCallbackController, LimitRequestCallbackController, WithdrawalCallbackControllerA, WithdrawalCallbackControllerB } from './funding/callback-urls/callback-url.controllers.js';
import { CallbackUrlChanges } from './funding/callback-urls/callback-url-changes.service.js';
import { TestCallbacksController } from './delivery/test-callbacks/test-callbacks.controller.js';
import { TestCallbacks } from './delivery/test-callbacks/test-callbacks.service.js';
import { SourceIpsController } from './callbacks/source-ips.controller.js';
import { DestinationsAdminController, PartnerDestinationsController } from './delivery/destinations/destinations.controller.js';
import { DestinationsService } from './delivery/destinations/destinations.service.js';
import { DomainErrorFilter } from './platform/http/domain-error.js';
import { DomainTransitions } from './funding/domain/domain-transitions.js';
import { UnexpectedErrorFilter } from './platform/http/unexpected-error.filter.js';
import { CompaniesController, CreditAdminController, CreditTermsController } from './funding/companies/companies.controller.js';
import { CompaniesService } from './funding/companies/companies.service.js';
import { APP_CONFIG, AppConfig } from './platform/config/app-config.js';
import { controllersOf } from './platform/config/variant-controllers.js';
import { openDatabase } from './platform/database/database.js';
import { SqlPool } from './platform/database/sql-pool.js';
import { dataSourceOptions } from './data-source.js';
import { createRedis, REDIS, RedisConnection } from './platform/database/redis.js';
import { HealthController } from './operations/health.controller.js';
import { LimitRequestsAdminController, LimitRequestsController } from './funding/limit-requests/limit-requests.controller.js';
import { LimitRequestsService } from './funding/limit-requests/limit-requests.service.js';
import { LoansAdminController, LoansController } from './funding/loans/loans.controller.js';
import { LoansService } from './funding/loans/loans.service.js';
import { Metrics, MetricsController } from './operations/metrics.js';

import { AuditController } from './operators/audit/audit.controller.js';
import { AuditLog } from './operators/audit/audit-log.js';
import { OperatorCredentials } from './operators/operator-credentials.js';

import { OperatorsController } from './operators/operators.controller.js';
import { OperatorsService } from './operators/operators.service.js';
import { OperatorsBootstrap } from './operators/operators-bootstrap.js';
import { PartnersController } from './partners/partners.controller.js';
import { PartnersService } from './partners/partners.service.js';
import { PartnerSigning } from './partners/partner-signing.service.js';
import { PartnerProfile } from './partners/partner-profile.js';
import { PartnerSelfController } from './callbacks/operational-events/partner-self.controller.js';
import { PartnerPortalLinksController, PortalAdminController } from './partners/portal-links.controller.js';
import { PortalLinks } from './partners/portal-links.js';
import { PortalSessions } from './partners/portal-sessions.js';
import { PortalServices } from './portal/portal-services.js';
import { ClientCertificateController } from './partners/client-certificate.controller.js';
import { ClientCertificates } from './partners/client-certificates.service.js';
import { ClientTlsStore } from './partners/client-tls-store.js';
import { DEFAULT_PARTNER_RATE_LIMIT, PARTNER_RATE_LIMIT, RateLimiter } from './partners/rate-limiter.js';
import { CallbackRetention, DEFAULT_RETENTION_INTERVAL_MS, RETENTION_INTERVAL_MS } from './operations/callback-retention.js';
import { SecretBox } from './platform/crypto/secret-box.js';
import { SecretsReencryption } from './partners/secrets-reencryption.js';
import { WithdrawalsAdminController, WithdrawalsControllerA, WithdrawalsControllerB } from './funding/withdrawals/withdrawals.controller.js';
import { WithdrawalsService } from './funding/withdrawals/withdrawals.service.js';

/** Closes the shared Redis connection when the app shuts down. */
@Injectable()
class RedisCloser implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: RedisConnection) {}
  async onApplicationShutdown() {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

@Module({})
export class AppModule {
  /**
   * The whole service, built from one parsed configuration (tests pass their own). ROLE picks
   * the parts: `api` serves the HTTP API and runs the outbox relay, `worker` delivers (and
   * serves only /health, /ready and /metrics), `all` does both.
   */
  static forRoot(config: AppConfig): DynamicModule {
    const api = config.role !== 'worker';
    const worker = config.role !== 'api';
    return {
      module: AppModule,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => ({ ...dataSourceOptions(config.databaseUrl), retryAttempts: 2, retryDelay: 1000 }),
          dataSourceFactory: (options) => openDatabase(options!, config.secretsKeys),
        }),
      ],
      controllers: controllersOf(config.variant, [
        HealthController,
        MetricsController,
        ...(api
          ? [
              // Before any `v1/callbacks/:callbackId` route (CallbacksController), so "source-ips"
              // and "destinations" are not taken for an id.
              SourceIpsController,
              PartnerDestinationsController,
              DestinationsAdminController,
              CallbackFeedController,
              TestCallbacksController,
              CallbacksController,
              PartnersController,
              PartnerSelfController,
              PartnerPortalLinksController,
              PortalAdminController,
              ClientCertificateController,
              CompaniesController,
              CreditTermsController,
              CreditAdminController,
              LimitRequestsController,
              LimitRequestsAdminController,
              WithdrawalsControllerA,
              WithdrawalsControllerB,
              WithdrawalsAdminController,
              CompanyCallbackController,
              LimitRequestCallbackController,
              WithdrawalCallbackControllerA,
              WithdrawalCallbackControllerB,
              LoansController,
              LoansAdminController,
              CallbacksAdminController,
              OperatorsController,
              AuditController,
              PartnerEventsController,
              PartnerEventsAdminController,
            ]
          : []),
      ]),
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: DNS_LOOKUP, useValue: dns.lookup },
        { provide: REDIS, useFactory: () => createRedis(config.redisUrl, `${config.queuePrefix}-app`) },
        RedisCloser,
        Metrics,
        // Both roles wake admission: commits and redeliveries (api), settlements (worker).
        AdmissionSignal,
        // The connections of the hand-written SQL, every role's.
        SqlPool,
        // Every role prunes; an advisory lock lets one process at a time do it.
        CallbackRetention,
        { provide: RETENTION_INTERVAL_MS, useValue: DEFAULT_RETENTION_INTERVAL_MS },
        { provide: SecretBox, useValue: new SecretBox(config.secretsKeys) },
        // Every role: a process whose SECRETS_KEY cannot open a stored secret stops at start.
        SecretsReencryption,
        { provide: APP_FILTER, useClass: UnexpectedErrorFilter },
        { provide: APP_FILTER, useClass: DomainErrorFilter },
        ...(api
          ? [
              OperatorCredentials,
              OperatorsService,
              OperatorsBootstrap,
              AuditLog,
              PartnersService,
              PartnerSigning,
              PartnerProfile,
              PortalLinks,
              PortalSessions,
              PortalServices,
              ClientCertificates,
              RateLimiter,
              { provide: PARTNER_RATE_LIMIT, useValue: DEFAULT_PARTNER_RATE_LIMIT },
              CompaniesService,
              LimitRequestsService,
              WithdrawalsService,
              LoansService,
              CallbackRecorder,
              DomainTransitions,
              CompanyChanges,
              CallbackUrlValidator,
              CallbackReads,
              CallbackRepairs,
              Redelivery,
              BulkReplay,
              { provide: REPLAY_LIMIT, useValue: DEFAULT_REPLAY_LIMIT },
              OperationalEvents,
              Writes,
              { provide: AFTER_COMMIT, useExisting: AdmissionSignal },
              CallbackQueue,
              Admission,
              CallbackRelay,
              { provide: ADMISSION_INTERVAL, useValue: ADMISSION_INTERVAL_MS },
              DestinationsService,
              CallbackFeed,
              TestCallbacks,
              CallbackUrlChanges,
            ]
          : []),
        ...(worker ? [CallbackSender, ClientTlsStore, Settlement, CallbackDelivery, DeliveryWorker] : []),
      ],
    };
  }
}
