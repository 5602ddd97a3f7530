import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { CREDIT_STATUSES } from '../companies/credit-status.js';
// Response schemas for the OpenAPI document only: the views (*.views.ts) build the bodies.

export class ErrorResponse {
  @ApiProperty({ example: 409 }) statusCode: number;
  @ApiProperty({ example: 'Conflict' }) error: string;
  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
    example: 'Withdrawal request cannot become accepted: its current status is paid_out',
    description: 'a list of messages for validation errors (400), one message otherwise',
  })
  message: string | string[];
}

const uuid = { format: 'uuid' } as const;
const money = (example: string) => ({ type: 'string', example, description: 'decimal string, 2 decimals' }) as const;

export class CompanyResponse {
  @ApiProperty(uuid) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ nullable: true, type: 'string' }) registrationNumber: string | null;
  @ApiProperty({ example: 'EUR' }) currency: string;
  @ApiPropertyOptional({ nullable: true, type: 'string', description: 'variant A: the organization callback URL' }) callback?: string | null;
  @ApiPropertyOptional({ nullable: true, type: 'string', description: 'variant B: the organization callback URL' }) status_callback?: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export class CreditStatusResponse {
  @ApiProperty(uuid) companyId: string;
  @ApiProperty({ enum: CREDIT_STATUSES }) creditStatus: string;
  @ApiProperty(money('10000.00')) creditLimit: string;
  @ApiProperty(money('2500.50')) borrowedAmount: string;
  @ApiProperty({ ...money('7499.50'), description: 'creditLimit − borrowedAmount' }) creditBalance: string;
  @ApiProperty({ example: 'EUR' }) currency: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class TermsResponse {
  @ApiProperty(uuid) companyId: string;
  @ApiProperty(money('10000.00')) creditLimit: string;
  @ApiProperty({ example: 'EUR' }) currency: string;
  @ApiProperty({ type: 'string', example: '7.50', description: 'percent per year' }) annualInterestRate: string;
  @ApiProperty({ example: 30 }) repaymentTermDays: number;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class LimitRequestResponse {
  @ApiProperty(uuid) id: string;
  @ApiProperty(uuid) companyId: string;
  @ApiProperty(money('10000.00')) amount: string;
  @ApiProperty({ example: 'EUR' }) currency: string;
  @ApiProperty({ enum: ['pending', 'approved', 'rejected', 'canceled'] }) status: string;
  @ApiProperty({ nullable: true, type: 'string' }) status_callback: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class LimitRequestStatusResponse {
  @ApiProperty(uuid) limitRequestId: string;
  @ApiProperty({ enum: ['pending', 'approved', 'rejected', 'canceled'] }) status: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
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
  @ApiProperty({ example: 'EUR' }) currency: string;
  @ApiProperty(WITHDRAWAL_STATUS) status: string;
  @ApiProperty({ nullable: true, type: 'string' }) status_callback: string | null;
  @ApiProperty({ nullable: true, type: 'string' }) loan_status_callback: string | null;
  @ApiProperty({ nullable: true, type: 'string', format: 'uuid' }) loanId: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class WithdrawalStatusResponse {
  @ApiProperty(uuid) withdrawalId: string;
  @ApiProperty(WITHDRAWAL_STATUS) status: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class PaymentResponse {
  @ApiProperty(uuid) id: string;
  @ApiProperty(money('500.00')) amount: string;
  @ApiProperty({ format: 'date-time' }) paidAt: string;
}

export class LoanResponse {
  @ApiProperty(uuid) id: string;
  @ApiProperty(uuid) companyId: string;
  @ApiProperty(uuid) withdrawalId: string;
  @ApiProperty(money('2500.50')) principal: string;
  @ApiProperty(money('2000.50')) outstanding: string;
  @ApiProperty({ example: 'EUR' }) currency: string;
  @ApiProperty({ enum: ['active', 'repaid'] }) status: string;
  @ApiProperty({ type: [PaymentResponse] }) payments: PaymentResponse[];
  @ApiProperty({ type: PaymentResponse, nullable: true }) lastPayment: PaymentResponse | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class PartnerCreatedResponse {
  @ApiProperty(uuid) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'shown once' }) apiKey: string;
  @ApiProperty({ example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', description: 'Standard Webhooks secret, shown once' }) signingSecret: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export class SigningSecretResponse {
  @ApiProperty({ example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }) signingSecret: string;
}

export class CallbackAttemptResponse {
  @ApiProperty() number: number;
  @ApiProperty({ format: 'date-time' }) startedAt: string;
  @ApiProperty() durationMs: number;
  @ApiProperty({ nullable: true, type: 'integer' }) statusCode: number | null;
  @ApiProperty({ nullable: true, type: 'string', example: 'timeout: no answer within 15000 ms' }) error: string | null;
  @ApiProperty({ nullable: true, type: 'string', description: 'first 1 KiB' }) responseBody: string | null;
  @ApiProperty({ nullable: true, type: 'string', example: '20.93.102.228' }) sourceAddress: string | null;
}

export class CallbackBody {
  @ApiProperty({
    enum: [0, 1, 2, 3, 4],
    description: '0 CreditLimitUpdated, 1 WithdrawalRequestStatusChanged, 2 CreditBalanceUpdated, 3 LimitRequestStatusChanged, 4 LoanPaymentRegistered',
  })
  message: number;
  @ApiProperty({ nullable: true, type: 'string', format: 'uuid' }) withdrawalId: string | null;
  @ApiProperty(uuid) companyId: string;
  @ApiProperty({ nullable: true, type: 'string', format: 'uuid' }) limitRequestId: string | null;
  @ApiProperty({ nullable: true, type: 'string', format: 'uuid' }) loanId: string | null;
}

export class CallbackMessageResponse {
  @ApiProperty({ ...uuid, description: 'also the webhook-id header' }) id: string;
  @ApiProperty({ enum: [0, 1, 2, 3, 4] }) message: number;
  @ApiProperty({ example: 'CreditLimitUpdated' }) name: string;
  @ApiProperty() url: string;
  @ApiProperty({ type: CallbackBody }) body: CallbackBody;
  @ApiProperty({ enum: ['pending', 'delivered', 'failed'] }) status: string;
  @ApiProperty() attemptCount: number;
  @ApiProperty({ nullable: true, type: 'string', format: 'date-time' }) nextAttemptAt: string | null;
  @ApiProperty({ nullable: true, type: 'string' }) lastError: string | null;
  @ApiProperty(uuid) companyId: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ nullable: true, type: 'string', format: 'date-time' }) deliveredAt: string | null;
}

export class CallbackWithAttemptsResponse extends CallbackMessageResponse {
  @ApiProperty({ type: [CallbackAttemptResponse] }) attempts: CallbackAttemptResponse[];
}

export class CallbackPageResponse {
  @ApiProperty({ type: [CallbackMessageResponse] }) items: CallbackMessageResponse[];
  @ApiProperty({ nullable: true, type: 'string' }) nextCursor: string | null;
}

export class RedeliverCountResponse {
  @ApiProperty() count: number;
}

export class SourceIpsResponse {
  @ApiProperty({ enum: ['A', 'B'] }) variant: string;
  @ApiProperty({ type: [String], example: ['20.82.192.194', '20.67.208.150', '20.105.65.222', '20.93.102.228'] }) addresses: string[];
}
