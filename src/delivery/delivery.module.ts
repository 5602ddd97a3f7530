import { DynamicModule, Module } from '@nestjs/common';
import { CallbacksModule, DestinationCircuits } from '../callbacks/index.js';
import { AppConfig, moduleFor, PlatformModule } from '../platform/index.js';
import { EgressModule } from '../egress/index.js';
import { OperationsModule } from '../operations/index.js';
import { OperatorsModule } from '../operators/index.js';
import { PartnersModule } from '../partners/index.js';
import { Admission } from './admission.js';
import { CallbackDelivery } from './callback-delivery.js';
import { CallbackQueue } from './callback-queue.js';
import { ADMISSION_INTERVAL, ADMISSION_INTERVAL_MS, CallbackRelay } from './callback-relay.js';
import { RelayRepository } from './relay.repository.js';
import { QueueDashboard } from './dashboard/dashboard-mount.js';
import { DeliveryWorker } from './delivery-worker.js';
import { WorkerRegistry } from './worker-registry.js';
import { DestinationsAdminController, PartnerDestinationsController } from './destinations/destinations.controller.js';
import { DestinationsService } from './destinations/destinations.service.js';
import { Settlement } from './settlement.js';
import { TestEvents } from './test-callbacks/test-events.service.js';

/**
 * How a callback travels: admission and its relay (api), the queue, the worker and settlement
 * (worker); and what partners and operators see of it: destinations, test callbacks, the queue's
 * dashboard.
 */
@Module({})
export class DeliveryModule {
  static forRoot(config: AppConfig): DynamicModule {
    return moduleFor(DeliveryModule, config, {
      imports: [
        PlatformModule.forRoot(config),
        CallbacksModule.forRoot(config),
        EgressModule.forRoot(config),
        OperatorsModule.forRoot(config),
        PartnersModule.forRoot(config),
        OperationsModule.forRoot(config),
      ],
      controllers: { api: [PartnerDestinationsController, DestinationsAdminController] },
      providers: {
        api: [
          CallbackQueue,
          Admission,
          CallbackRelay,
          RelayRepository,
          { provide: ADMISSION_INTERVAL, useValue: ADMISSION_INTERVAL_MS },
          DestinationsService,
          { provide: DestinationCircuits, useExisting: DestinationsService },
          TestEvents,
          QueueDashboard,
        ],
        worker: [Settlement, CallbackDelivery, WorkerRegistry, DeliveryWorker],
      },
      exports: [DestinationsService, DestinationCircuits, TestEvents],
    });
  }
}
