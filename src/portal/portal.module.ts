import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig, moduleFor, PlatformModule } from '../platform/index.js';
import { CallbacksModule } from '../callbacks/index.js';
import { DeliveryModule } from '../delivery/index.js';
import { EgressModule } from '../egress/index.js';
import { FundingModule } from '../funding/index.js';
import { PartnersModule } from '../partners/index.js';
import { CallbackPages } from './portal-callback-pages.js';
import { PortalAssetsController } from './portal-assets.controller.js';
import { PortalCallbacksController } from './portal-callbacks.controller.js';
import { PortalEventsController } from './portal-events.controller.js';
import { PortalForms } from './portal-forms.js';
import { PortalHttp } from './portal-http.js';
import { PortalLayout } from './portal-layout.js';
import { PortalOverviewController } from './portal-overview.controller.js';
import { PortalReplayController } from './portal-replay.controller.js';
import { PortalSettingsController } from './portal-settings.controller.js';
import { PortalSignInController } from './portal-sign-in.controller.js';
import { PortalTestController } from './portal-test.controller.js';
import { PortalUrlsController } from './portal-urls.controller.js';

/**
 * The partner portal: server-rendered pages over the partner's own data, each a route of a Nest
 * controller declaring its access, rendered by Nest's view engine (portal-http.ts), calling the
 * partner API's own services through their modules' faces.
 */
@Module({})
export class PortalModule {
  static forRoot(config: AppConfig): DynamicModule {
    return moduleFor(PortalModule, config, {
      imports: [
        PlatformModule.forRoot(config),
        EgressModule.forRoot(config),
        PartnersModule.forRoot(config),
        CallbacksModule.forRoot(config),
        FundingModule.forRoot(config),
        DeliveryModule.forRoot(config),
      ],
      controllers: {
        api: [
          PortalAssetsController,
          PortalSignInController,
          PortalOverviewController,
          PortalCallbacksController,
          PortalUrlsController,
          PortalEventsController,
          PortalReplayController,
          PortalTestController,
          PortalSettingsController,
        ],
      },
      providers: { api: [PortalHttp, PortalForms, PortalLayout, CallbackPages] },
    });
  }
}
