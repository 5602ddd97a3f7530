// egress/: how the service reaches a partner (URL guard, special addresses, the got sender, TLS).
// The public face of the module: other modules import only this file (.dependency-cruiser.cjs).
export { breakerResult, isFinal, isRetryable, isSuccess, isSuccessStatus } from './attempt-outcome.js';
export type { AttemptOutcome, BreakerResult } from './attempt-outcome.js';
export { HEADER_COUNT_LIMIT, HEADER_VALUE_LIMIT } from './answer-headers.js';
export { CallbackSender } from './callback-sender.js';
export type { SendRequest, SendResult } from './callback-sender.js';
export { CallbackUrlValidator } from './callback-url.validator.js';
export type { ClientTls } from './client-tls.js';
export { EgressModule } from './egress.module.js';
