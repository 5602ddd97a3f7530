import { DynamicModule, Module } from '@nestjs/common';
import dns from 'node:dns';
import { AppConfig, moduleFor, PlatformModule } from '../platform/index.js';
import { CallbackSender, DNS_LOOKUP } from './callback-sender.js';
import { CallbackUrlValidator } from './callback-url.validator.js';

/** How the service reaches a partner: the URL guard at registration, the sender at delivery. */
@Module({})
export class EgressModule {
  static forRoot(config: AppConfig): DynamicModule {
    return moduleFor(EgressModule, config, {
      imports: [PlatformModule.forRoot(config)],
      providers: {
        any: [{ provide: DNS_LOOKUP, useValue: dns.lookup }],
        api: [CallbackUrlValidator],
        worker: [CallbackSender],
      },
      exports: [CallbackUrlValidator, CallbackSender],
    });
  }
}
