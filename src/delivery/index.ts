// delivery/: how a callback travels (admission, queue, worker, settlement, window and breaker, retry policy),
// destinations, test callbacks and the queue's dashboard.
// The public face of the module: other modules import only this file (.dependency-cruiser.cjs).
export { dashboardDocument } from './dashboard/dashboard-document.js';
export { DASHBOARD_ACCESS } from './dashboard/dashboard-mount.js';
export { DestinationsService } from './destinations/destinations.service.js';
export { RetryPolicy } from './retry-policy.js';
export { endedByOutage, testNotSentError } from './settle-attempt.js';
export { admitOneMoreTest, TEST_CALLBACKS_PER_MINUTE } from './test-callbacks/test-callback-rate.js';
export { TestEvents } from './test-callbacks/test-events.service.js';
export { DeliveryModule } from './delivery.module.js';
