import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig, moduleFor, PlatformModule } from '../platform/index.js';
import { OperatorsModule } from '../operators/index.js';
import { PartnersModule } from '../partners/index.js';
import { BulkReplay, DEFAULT_REPLAY_LIMIT, REPLAY_LIMIT } from './bulk-replay.js';
import { CallbackFeedController } from './callback-feed.controller.js';
import { CallbackFeed } from './callback-feed.service.js';
import { CallbackReads } from './callback-reads.js';
import { PartnerActivityReads } from './partner-activity.js';
import { CallbackRecorder } from './callback-recorder.js';
import { CallbackRepairs } from './callback-repairs.js';
import { CallbacksAdminController } from './callbacks-admin.controller.js';
import { CallbacksController } from './callbacks.controller.js';
import {
  PartnerEventsAdminController,
  PartnerEventsController,
} from './operational-events/operational-events.controllers.js';
import { OperationalEvents } from './operational-events/operational-events.service.js';
import { PartnerSelfController } from './operational-events/partner-self.controller.js';
import { PartnerLookupController } from './partner-lookup/partner-lookup.controller.js';
import { PartnerLookup } from './partner-lookup/partner-lookup.js';
import { Redelivery } from './redelivery.js';
import { SourceIpsController } from './source-ips.controller.js';
import { AdmissionStore } from './store/admission-store.js';
import { DashboardStore } from './store/dashboard-reads.js';
import { DeliveryLoads } from './store/delivery-load.js';
import { FeedStore } from './store/feed-page.js';
import { RetentionStore } from './store/retention.js';
import { SettlementStore } from './store/settlement-store.js';
import { DeliveryCounts } from './store/counts.js';
import { DestinationRepository } from './store/destinations.js';
import { DestinationSummaries } from './store/destination-summaries.js';
import { OperationalEventRepository } from './store/operational-events.js';
import { PortalActivityRepository } from './store/portal-activity.js';
import { CallbackReadRepository } from './store/reads.js';
import { CallbackInserts } from './store/recording.js';
import { RepairRepository } from './store/repairs.js';
import { ReplayRepository } from './store/replay.js';
import { TestCallbackRepository } from './store/test-callbacks.js';
import { CallbackUrlFollowing } from './store/url-changes.js';
import { UrlDeliveries } from './store/url-deliveries.js';
import { WorkerSlots } from './store/worker-slots.js';

/** The store's repositories (store/): every role's, whichever role's services use them. */
const REPOSITORIES = [
  AdmissionStore,
  CallbackInserts,
  CallbackReadRepository,
  DashboardStore,
  DeliveryCounts,
  DeliveryLoads,
  DestinationRepository,
  DestinationSummaries,
  FeedStore,
  OperationalEventRepository,
  PortalActivityRepository,
  RepairRepository,
  ReplayRepository,
  RetentionStore,
  SettlementStore,
  TestCallbackRepository,
  CallbackUrlFollowing,
  UrlDeliveries,
  WorkerSlots,
];

/**
 * What a callback is and who reads it: recording, lists, the feed, redelivery, operational
 * events, and the callback store (store/), the one owner of SQL on the callback tables.
 */
@Module({})
export class CallbacksModule {
  static forRoot(config: AppConfig): DynamicModule {
    return moduleFor(CallbacksModule, config, {
      imports: [PlatformModule.forRoot(config), OperatorsModule.forRoot(config), PartnersModule.forRoot(config)],
      controllers: {
        // SourceIpsController before any `v1/callbacks/:callbackId` route (CallbacksController).
        api: [
          SourceIpsController,
          CallbackFeedController,
          CallbacksController,
          PartnerSelfController,
          CallbacksAdminController,
          PartnerEventsController,
          PartnerEventsAdminController,
          PartnerLookupController,
        ],
      },
      providers: {
        any: REPOSITORIES,
        api: [
          CallbackRecorder,
          CallbackReads,
          CallbackRepairs,
          Redelivery,
          BulkReplay,
          { provide: REPLAY_LIMIT, useValue: DEFAULT_REPLAY_LIMIT },
          OperationalEvents,
          CallbackFeed,
          PartnerLookup,
          PartnerActivityReads,
        ],
      },
      exports: [
        ...REPOSITORIES,
        CallbackRecorder,
        CallbackReads,
        CallbackRepairs,
        Redelivery,
        BulkReplay,
        OperationalEvents,
        PartnerActivityReads,
      ],
    });
  }
}
