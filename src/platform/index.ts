// platform/: configuration, database and migrations, the write path, HTTP conventions and errors,
// OpenAPI, logging, tracing, crypto. Imports no feature module.
// The public face of the module: other modules import only this file (.dependency-cruiser.cjs).
export { Batcher, SerialBatcher } from './common/batcher.js';
export { Lru } from './common/lru.js';
export { MONEY_INPUT_PATTERN, formatMoney, moneyColumn, moneyFromDb, parseMoney } from './common/money.js';
export { assertStatusChange } from './common/state-machine.js';
export type { Transitions } from './common/state-machine.js';
export { LockedRows, updatableColumns } from './common/locked-rows.repository.js';
export { APP_CONFIG, ConfigError, loadConfig, logFormatOf } from './config/app-config.js';
export type { AppConfig } from './config/app-config.js';
export { OnlyVariant } from './config/variant-controllers.js';
export { VARIANTS } from './config/variant.js';
export type { VariantNames } from './config/variant.js';
export { signatureHeader, signerFor } from './crypto/callback-signature.js';
export type { Signer } from './crypto/callback-signature.js';
export { pemBlocks } from './crypto/pem.js';
export { SEALED_COLUMNS, SealBroken, SecretBox } from './crypto/secret-box.js';
export type { SealColumn } from './crypto/secret-box.js';
export { DEFAULT_SIGNATURE_SCHEME, SIGNATURE_SCHEMES, newSigningKey } from './crypto/signing-keys.js';
export type { ShownKey, SignatureScheme } from './crypto/signing-keys.js';
export { bearerToken, hashToken, newApiKey, safeEqual } from './crypto/tokens.js';
export { PLANNER_SETTINGS, databaseOptions, ensureDatabase, isDataError } from './database/database.js';
export { FAIL_FAST, REDIS, createRedis, pingNamespace, redisNamespace } from './database/redis.js';
export type { RedisConnection } from './database/redis.js';
export { SqlPool } from './database/sql-pool.js';
export { StatementTimeout, sessionWithDeadline } from './database/sql-session.js';
export type { SqlSession } from './database/sql-session.js';
export { InputColumns, microsKey } from './database/sql.js';
export type { StatementPart } from './database/sql.js';
export { snapshotFiles } from './database/sql-snapshots.js';
export type { SnapshotStatement } from './database/sql-snapshots.js';
export {
  lockedRowsStatements,
  recordingConnection,
  recordingDataSource,
  repositoryStatements,
  standInRow,
} from './database/statement-recorder.js';
export type { RecordedStatement, SnapshotCalls } from './database/statement-recorder.js';
export { checkRedis } from './database/startup-checks.js';
export { AdmissionSignal, CALLBACKS_CHANNEL } from './database/admission-signal.js';
export { TransactionRunner, inWrite, noteDue } from './database/transaction-runner.js';
export { DomainError, invalidProperty, notFound, overtaken, sendDomainError, statusOf } from './http/domain-error.js';
export { codeOfStatus, ErrorCode } from './http/error-codes.js';
export { ErrorResponse } from './http/error-response.js';
export { answerRouterRefusal } from './http/framework-errors.js';
export { MAX_BODY_BYTES, registerBodyParsers } from './http/json-body.js';
export { PageCursor, PageLimit } from './http/page-query.js';
export { NoQuery, ParseUuid } from './http/strict-params.js';
export { UnexpectedErrorAnswer } from './http/unexpected-error.filter.js';
export { IsMoneyAmount, IsOmittable, QueryInt, StrictValidationPipe } from './http/validation.js';
export { IdempotencyKey } from './idempotency/idempotency-key.entity.js';
export { IdempotencyInterceptor } from './idempotency/idempotency.interceptor.js';
export { IdempotencyPruning } from './idempotency/idempotency-key.repository.js';
export { RedactingLogger } from './logging/redacting-logger.js';
export { RepeatLimitedLog } from './logging/repeat-limited-log.js';
export { ApiErrors, Doc, SECURITY } from './openapi/api-doc.js';
export { buildApiDocument } from './openapi/api-document.js';
export { mountPartnerDocs, PARTNER_API_PATH } from './openapi/partner-docs.js';
export { GUIDE_PATH } from './openapi/partner-guide.js';
export { variantOnly } from './openapi/api-variant-doc.js';
export {
  CALLBACK_URL,
  currency,
  money,
  nullableTimestamp,
  nullableUuid,
  timestamp,
  url,
  uuid,
} from './openapi/schema.js';
export { RouteSpanInterceptor } from './telemetry/route-span.interceptor.js';
export { currentTraceparent, inAttemptSpan, tracingActive } from './telemetry/trace-context.js';
export { databaseModule, PlatformModule } from './platform.module.js';
export { moduleFor } from './config/module-parts.js';
