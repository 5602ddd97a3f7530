import { DynamicModule, Module } from '@nestjs/common';
import { DestinationCircuits } from '../callbacks/index.js';
import { AppConfig, moduleFor } from '../platform/index.js';
import { Admission } from './admission.js';
import { CallbackDelivery } from './callback-delivery.js';
import { CallbackQueue } from './callback-queue.js';
import { ADMISSION_INTERVAL, ADMISSION_INTERVAL_MS, CallbackRelay } from './callback-relay.js';
import { DeliveryWorker } from './delivery-worker.js';
import { WorkerRegistry } from './worker-registry.js';
import { DestinationsAdminController, PartnerDestinationsController } from './destinations/destinations.controller.js';
import { DestinationsService } from './destinations/destinations.service.js';
import { Settlement } from './settlement.js';
import { TestCallbacksController } from './test-callbacks/test-callbacks.controller.js';
import { TestCallbacks } from './test-callbacks/test-callbacks.service.js';
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
      controllers: { api: [PartnerDestinationsController, DestinationsAdminController, TestCallbacksController] },
      providers: {
        api: [
          CallbackQueue,
          Admission,
          CallbackRelay,
          { provide: ADMISSION_INTERVAL, useValue: ADMISSION_INTERVAL_MS },
          DestinationsService,
          { provide: DestinationCircuits, useExisting: DestinationsService },
          TestCallbacks,
          TestEvents,
        ],
        worker: [Settlement, CallbackDelivery, WorkerRegistry, DeliveryWorker],
      },
      exports: [DestinationsService, DestinationCircuits, TestCallbacks, TestEvents],
    });
  }
}
