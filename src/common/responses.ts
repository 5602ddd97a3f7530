import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { CallbackMessage } from '../callbacks/callback-message.js';
import { CREDIT_STATUSES } from '../companies/credit-status.js';
import { variantOnly } from './api-variant-doc.js';
// Response schemas for the OpenAPI document only: the views (*.views.ts) build the bodies. The
// end-to-end tests validate every response against them, extra properties included.

export class ErrorResponse {
  @ApiProperty({ type: 'integer', example: 409 }) statusCode: number;
  @ApiProperty({ example: 'Conflict' }) error: string;
  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
    example: 'Withdrawal request cannot become accepted: its current status is paid_out',
    description: 'a list of messages for validation errors (400), one message otherwise',
  })
  message: string | string[];
}

const MESSAGE_NAMES = Object.values(CallbackMessage).filter((v) => typeof v === 'string');
const uuid = { type: 'string', format: 'uuid' } as const;
const nullableUuid = { type: 'string', format: 'uuid', nullable: true } as const;
const timestamp = { type: 'string', format: 'date-time', description: 'ISO-8601, UTC' } as const;
const nullableTimestamp = { ...timestamp, nullable: true } as const;
/** Money in responses: a decimal string with exactly 2 decimals, never a JSON number (docs/partners.md, "Credentials and conventions"). */
const money = (example: string) => ({ type: 'string', pattern: '^\\d+\\.\\d{2}$', example, description: 'decimal string, exactly 2 decimals' }) as const;
const currency = { type: 'string', pattern: '^[A-Z]{3}$', example: 'EUR', description: 'ISO 4217' } as const;
const url = (description: string) => ({ type: 'string', format: 'uri', nullable: true, description }) as const;

export class CompanyResponse {
  @ApiProperty(uuid) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ nullable: true, type: 'string' }) registrationNumber: string | null;
  @ApiProperty(currency) currency: string;
  // One of the two, by the deployment's API variant: the document of a variant shows only its own.
  @ApiProperty({ ...url('the organization callback URL (variant A)'), ...variantOnly('A') }) callback?: string | null;
  @ApiProperty({ ...url('the organization callback URL (variant B)'), ...variantOnly('B') }) status_callback?: string | null;
  @ApiProperty(timestamp) createdAt: string;
}

export class CreditStatusResponse {
  @ApiProperty(uuid) companyId: string;
  @ApiProperty({ enum: CREDIT_STATUSES }) creditStatus: string;
  @ApiProperty(money('10000.00')) creditLimit: string;
  @ApiProperty(money('2500.50')) borrowedAmount: string;
  @ApiProperty({ ...money('7499.50'), description: 'creditLimit − borrowedAmount' }) creditBalance: string;
  @ApiProperty(currency) currency: string;
  @ApiProperty(timestamp) updatedAt: string;
}

export class TermsResponse {
  @ApiProperty(uuid) companyId: string;
  @ApiProperty(money('10000.00')) creditLimit: string;
  @ApiProperty(currency) currency: string;
  @ApiProperty({ type: 'string', pattern: '^\\d+\\.\\d{2}$', example: '7.50', description: 'percent per year, exactly 2 decimals' }) annualInterestRate: string;
  @ApiProperty({ type: 'integer', example: 30 }) repaymentTermDays: number;
  @ApiProperty(timestamp) updatedAt: string;
}

export class LimitRequestResponse {
  @ApiProperty(uuid) id: string;
  @ApiProperty(uuid) companyId: string;
  @ApiProperty(money('10000.00')) amount: string;
  @ApiProperty(currency) currency: string;
  @ApiProperty({ enum: ['pending', 'approved', 'rejected', 'canceled'] }) status: string;
  @ApiProperty(url('receives LimitRequestStatusChanged (3)')) status_callback: string | null;
  @ApiProperty(timestamp) createdAt: string;
  @ApiProperty(timestamp) updatedAt: string;
}

export class LimitRequestStatusResponse {
  @ApiProperty(uuid) limitRequestId: string;
  @ApiProperty({ enum: ['pending', 'approved', 'rejected', 'canceled'] }) status: string;
  @ApiProperty(timestamp) updatedAt: string;
}

const WITHDRAWAL_STATUS = {
  type: 'string',
  example: 'paid_out',
  description: 'created, accepted, rejected, cancelled, paid_out, repaid; open-ended: clients must tolerate new values',
} as const;

export class WithdrawalResponse {
  @ApiProperty(uuid) id: string;
  @ApiProperty(uuid) companyId: string;
  @ApiProperty(money('2500.50')) amount: string;
  @ApiProperty(currency) currency: string;
  @ApiProperty(WITHDRAWAL_STATUS) status: string;
  @ApiProperty(url('receives WithdrawalRequestStatusChanged (1)')) status_callback: string | null;
  @ApiProperty(url('receives LoanPaymentRegistered (4)')) loan_status_callback: string | null;
  @ApiProperty(nullableUuid) loanId: string | null;
  @ApiProperty(timestamp) createdAt: string;
  @ApiProperty(timestamp) updatedAt: string;
}

export class WithdrawalStatusResponse {
  @ApiProperty(uuid) withdrawalId: string;
  @ApiProperty(WITHDRAWAL_STATUS) status: string;
  @ApiProperty(timestamp) updatedAt: string;
}

export class PaymentResponse {
  @ApiProperty(uuid) id: string;
  @ApiProperty(money('500.00')) amount: string;
  @ApiProperty(timestamp) paidAt: string;
}

export class LoanResponse {
  @ApiProperty(uuid) id: string;
  @ApiProperty(uuid) companyId: string;
  @ApiProperty(uuid) withdrawalId: string;
  @ApiProperty(money('2500.50')) principal: string;
  @ApiProperty(money('2000.50')) outstanding: string;
  @ApiProperty(currency) currency: string;
  @ApiProperty({ enum: ['active', 'repaid'] }) status: string;
  @ApiProperty({ type: [PaymentResponse] }) payments: PaymentResponse[];
  @ApiProperty({ type: PaymentResponse, nullable: true, description: 'the latest payment, null before the first' }) lastPayment: PaymentResponse | null;
  @ApiProperty(timestamp) createdAt: string;
  @ApiProperty(timestamp) updatedAt: string;
}

const SIGNING_SECRET = { example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', description: 'hmac-sha256 only: the Standard Webhooks secret, shown once' } as const;
const SIGNING_PUBLIC_KEY = {
  example: 'whpk_PUAXw+hDiVqStwqnTRt+vJyYLM8uxJaMwM1V8Sr0Zgw=',
  description: 'ed25519 only (in place of signingSecret): the whpk_ public key v1a signatures verify with; the private key is never shown',
} as const;

export class PartnerCreatedResponse {
  @ApiProperty(uuid) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'shown once' }) apiKey: string;
  @ApiPropertyOptional(SIGNING_SECRET) signingSecret?: string;
  @ApiPropertyOptional(SIGNING_PUBLIC_KEY) signingPublicKey?: string;
  @ApiProperty(timestamp) createdAt: string;
}

/** The new key of a rotation: one of the two, by the partner's scheme. */
export class SigningKeyResponse {
  @ApiPropertyOptional(SIGNING_SECRET) signingSecret?: string;
  @ApiPropertyOptional(SIGNING_PUBLIC_KEY) signingPublicKey?: string;
}

export class SignatureSchemeResponse extends SigningKeyResponse {
  @ApiProperty({ enum: ['hmac-sha256', 'ed25519'], description: 'the scheme callbacks are signed with from now on (the previous key signs too for 24 h)' })
  signatureScheme: string;
}

export class ApiKeyRotatedResponse {
  @ApiProperty({ description: 'the new API key, shown once', example: 'fsk_…' }) apiKey: string;
  @ApiProperty({ ...timestamp, description: 'until when the replaced key still works (now, for previousKeyValidHours 0)' }) previousKeyExpiresAt: string;
}

export class CallbackAttemptResponse {
  @ApiProperty({ type: 'integer', minimum: 1 }) number: number;
  @ApiProperty(timestamp) startedAt: string;
  @ApiProperty({ type: 'integer', minimum: 0 }) durationMs: number;
  @ApiProperty({ nullable: true, type: 'integer', description: 'null when no HTTP answer came' }) statusCode: number | null;
  @ApiProperty({ nullable: true, type: 'string', example: 'timeout: no answer within 15000 ms' }) error: string | null;
  @ApiProperty({ nullable: true, type: 'string', description: 'first 1 KiB' }) responseBody: string | null;
  @ApiProperty({ nullable: true, type: 'string', example: '20.93.102.228' }) sourceAddress: string | null;
}

export class CallbackBody {
  @ApiProperty({
    type: 'integer',
    enum: [0, 1, 2, 3, 4],
    description: '0 CreditLimitUpdated, 1 WithdrawalRequestStatusChanged, 2 CreditBalanceUpdated, 3 LimitRequestStatusChanged, 4 LoanPaymentRegistered',
  })
  message: number;
  @ApiProperty(nullableUuid) withdrawalId: string | null;
  @ApiProperty(uuid) companyId: string;
  @ApiProperty(nullableUuid) limitRequestId: string | null;
  @ApiProperty(nullableUuid) loanId: string | null;
}

export class CallbackMessageResponse {
  @ApiProperty({ ...uuid, description: 'also the webhook-id header' }) id: string;
  @ApiProperty({ type: 'integer', enum: [0, 1, 2, 3, 4] }) message: number;
  @ApiProperty({ enum: MESSAGE_NAMES, example: 'CreditLimitUpdated' }) name: string;
  @ApiProperty({ type: 'string', format: 'uri' }) url: string;
  @ApiProperty({ type: CallbackBody }) body: CallbackBody;
  @ApiProperty({
    enum: ['pending', 'delivered', 'failed'],
    description:
      'pending: on its way — due at nextAttemptAt, waiting for room at its destination (or for an open circuit to close), or being sent now; ' +
      'delivered: a 2xx came back; failed: the last attempt of its schedule failed, the destination refused it (410, a blocked address), ' +
      "or its schedule's total passed while its destination's circuit stayed open (lastError names the outage). " +
      'A callback to a destination that is not open never fails without an attempt. Failed callbacks are kept and can be redelivered.',
  })
  status: string;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'attempts made, redeliveries included (a failed probe of an open circuit is logged but spends none of the schedule)' })
  attemptCount: number;
  @ApiProperty({ ...nullableTimestamp, description: 'while pending: when it is due (it goes as soon as its destination has room)' }) nextAttemptAt: string | null;
  @ApiProperty({ nullable: true, type: 'string' }) lastError: string | null;
  @ApiProperty(uuid) companyId: string;
  @ApiProperty(timestamp) createdAt: string;
  @ApiProperty(nullableTimestamp) deliveredAt: string | null;
  @ApiProperty({ type: 'boolean', description: 'true for a test callback (POST /v1/callbacks/test: one attempt, not in the feed, no state changed); false for every real one' })
  test: boolean;
}

export class CallbackWithAttemptsResponse extends CallbackMessageResponse {
  @ApiProperty({ type: [CallbackAttemptResponse] }) attempts: CallbackAttemptResponse[];
}

export class CallbackPageResponse {
  @ApiProperty({ type: [CallbackMessageResponse] }) items: CallbackMessageResponse[];
  @ApiProperty({ nullable: true, type: 'string', description: 'opaque; null on the last page' }) nextCursor: string | null;
}

export class CallbackFeedItemResponse extends CallbackMessageResponse {
  @ApiProperty({ type: 'string', pattern: '^[0-9]{1,40}$', example: '7560000000000000123', description: 'its place in the feed: opaque digits, ascending; pass it (or next) as after' })
  position: string;
}

export class CallbackFeedPageResponse {
  @ApiProperty({ type: [CallbackFeedItemResponse], description: 'ascending position; test callbacks are never in the feed' }) items: CallbackFeedItemResponse[];
  @ApiProperty({ type: 'string', pattern: '^[0-9]{1,40}$', description: 'the after of the next call: the last item\'s position, or the after given when nothing new' })
  next: string;
}

export class RedeliverCountResponse {
  @ApiProperty({ type: 'integer', minimum: 0 }) count: number;
}

export class HealthResponse {
  @ApiProperty({ enum: ['ok'] }) status: string;
}

export class ReadinessResponse {
  @ApiProperty({ enum: ['ok', 'unavailable'] }) status: string;
  @ApiProperty({ enum: ['ok', 'unreachable'] }) database: string;
  @ApiProperty({ enum: ['ok', 'unreachable'] }) redis: string;
}

export class SourceIpsResponse {
  @ApiProperty({ enum: ['A', 'B'] }) variant: string;
  @ApiProperty({ type: [String], example: ['20.82.192.194', '20.67.208.150', '20.105.65.222', '20.93.102.228'] }) addresses: string[];
}
