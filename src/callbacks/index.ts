// callbacks/: what a callback is, who reads it, operational events, and the callback store (store/).
// The public face of the module: other modules import only this file (.dependency-cruiser.cjs).
export { BulkReplay } from './bulk-replay.js';
export { callbackOrigin, destinationKey, originOfKey } from './callback-destination.js';
export { DestinationCircuits } from './destination-circuits.js';
export type { CircuitState } from './destination-circuits.js';
export { OriginField } from './callback-filters.js';
export { callbackDocs } from './callback-document.js';
export type { CallbackTarget } from './callback-document.js';
export { CallbackMessage, buildCallbackBody } from './callback-message.js';
export { CALLBACK_MESSAGES, OPERATIONAL_EVENTS, catalogueEntry, readNextText } from './event-catalogue.js';
export type {
  CallbackBodyExample,
  CallbackMessageEntry,
  OperationalEventEntry,
  ReadPath,
  UrlProperty,
} from './event-catalogue.js';
export type { CallbackIds } from './callback-message.js';
export { CallbackReads } from './callback-reads.js';
export { nextAttemptShown, nextProbeShown, probeReady } from './circuit-wait.js';
export type { Circuit } from './circuit-wait.js';
export { CallbackRecorder, traced } from './callback-recorder.js';
export type { CallbackEvent } from './callback-recorder.js';
export { CallbackRepairs } from './callback-repairs.js';
export { SHOWN_STATUSES } from './callback-status.js';
export { ATTEMPT_KINDS, Callback, CallbackAttempt } from './callback.entity.js';
export type { AttemptKind } from './callback.entity.js';
export { CallbackBody, CallbackMessageResponse } from './callback.responses.js';
export { attemptView, callbackView } from './callback.views.js';
export { OPERATIONAL_EVENT_MODELS } from './operational-events/operational-event-document.js';
export { OperationalEvents } from './operational-events/operational-events.service.js';
export { Redelivery } from './redelivery.js';
export { AdmissionStore } from './store/admission-store.js';
export type { AdmittedRow, AskedProbe, CandidateFloors, CandidateRow } from './store/admission-store.js';
export { DeliveryCounts } from './store/counts.js';
export type { DeliveryState } from './store/counts.js';
export { DASHBOARD_COUNT_CAP, DASHBOARD_TABS, DashboardStore } from './store/dashboard-reads.js';
export type { AttemptRow, DashboardRow, DashboardTab } from './store/dashboard-reads.js';
export { DeliveryLoads } from './store/delivery-load.js';
export type { LoadedCallback } from './store/delivery-load.js';
export type { DestinationColumns, DestinationRow, DestinationSave } from './store/destination-states.js';
export { DestinationSummaries } from './store/destination-summaries.js';
export type { DestinationCounts, OpenDestination } from './store/destination-summaries.js';
export { DestinationRepository, WAITING_COUNT_CAP } from './store/destinations.js';
export { PartnerActivityReads } from './partner-activity.js';
export type { PartnerActivity } from './store/portal-activity.js';
export { CallbackInserts } from './store/recording.js';
export { RETENTION_BATCH, RetentionStore } from './store/retention.js';
export { SettlementStore } from './store/settlement-store.js';
export type { AttemptRecord } from './store/settlement.js';
export { TestCallbackRepository, TEST_EVENT } from './store/test-callbacks.js';
export { CallbackUrlFollowing } from './store/url-changes.js';
export { UrlDeliveries } from './store/url-deliveries.js';
export { WorkerSlots } from './store/worker-slots.js';
export type { ResourceRef } from './store/url-changes.js';
export { CallbacksModule } from './callbacks.module.js';
