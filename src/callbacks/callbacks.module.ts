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
