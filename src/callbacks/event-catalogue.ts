import { CallbackMessage } from './callback-message.js';
import type { OperationalEventType } from './operational-events/operational-event.js';

/** A read path, or one of a single API variant (the withdrawal collection and the terms route differ). */
export interface ReadPath {
  path: string;
  variant?: 'A' | 'B';
}

/** A callback body exactly as sent: the five keys in the contract's order. */
export interface CallbackBodyExample {
  message: CallbackMessage;
  withdrawalId: string | null;
  companyId: string;
  limitRequestId: string | null;
  loanId: string | null;
}

/** The URL property a message goes to; `company` is the organization's, `callback` (A) or `status_callback` (B). */
export type UrlProperty = 'company' | 'status_callback' | 'loan_status_callback';

export interface CallbackMessageEntry {
  code: CallbackMessage;
  name: keyof typeof CallbackMessage;
  /** When one is recorded. */
  when: string;
  /** The resource whose URL receives it, and that URL's property. */
  sentTo: { resource: 'company' | 'limit request' | 'withdrawal request'; property: UrlProperty };
  /** The body's ids that are set (the others are null). */
  ids: string;
  /** A body as the service sends it (written out here, so a test can hold the body builder to it). */
  example: CallbackBodyExample;
  /** What to read next: a callback says "read the current state". */
  readNext: ReadPath[];
}

export interface OperationalEventEntry {
  type: OperationalEventType;
  when: string;
  /** Each property of `data`, and what it holds. */
  data: Record<string, string>;
  /** A body as POSTed to the operationsUrl. */
  example: { type: OperationalEventType; timestamp: string; data: Record<string, string | number> };
  /** What the partner does on it. */
  act: string;
}

const COMPANY = '3f1c2a5e-8b7d-4c1e-9a2f-6d5e4c3b2a10';
const LIMIT_REQUEST = '7a9e0b1c-2d3f-4a5b-8c6d-e7f809a1b2c3';
const WITHDRAWAL = 'c4d5e6f7-0819-4a2b-9c3d-4e5f60718293';
const LOAN = '0e1f2a3b-4c5d-4e6f-8a7b-9c0d1e2f3a4b';
const COMPANY_STATUS: ReadPath = { path: 'GET /v1/companies/{companyId}/status' };
const WITHDRAWAL_READS = (['A', 'B'] as const).map((variant): ReadPath => ({
  path: `GET /v1/companies/{companyId}/${variant === 'A' ? 'withdrawal-requests' : 'withdrawal'}/{withdrawalId}`,
  variant,
}));

/**
 * Every callback message, in code order (API §5, "When one is created"; docs/partners.md, "The five
 * messages"): the one source the OpenAPI document's callback descriptions and examples are built
 * from, and the partner portal's event catalogue too, so the two cannot disagree.
 */
export const CALLBACK_MESSAGES: readonly CallbackMessageEntry[] = [
  {
    code: CallbackMessage.CreditLimitUpdated,
    name: 'CreditLimitUpdated',
    when: "the company's credit limit, credit status or terms change",
    sentTo: { resource: 'company', property: 'company' },
    ids: 'companyId',
    example: { message: 0, withdrawalId: null, companyId: COMPANY, limitRequestId: null, loanId: null },
    readNext: [COMPANY_STATUS, { path: 'GET /v1/companies/{companyId}/terms', variant: 'B' }],
  },
  {
    code: CallbackMessage.WithdrawalRequestStatusChanged,
    name: 'WithdrawalRequestStatusChanged',
    when: "a withdrawal request's status changes",
    sentTo: { resource: 'withdrawal request', property: 'status_callback' },
    ids: 'companyId, withdrawalId, and loanId once paid out',
    example: { message: 1, withdrawalId: WITHDRAWAL, companyId: COMPANY, limitRequestId: null, loanId: LOAN },
    readNext: WITHDRAWAL_READS,
  },
  {
    code: CallbackMessage.CreditBalanceUpdated,
    name: 'CreditBalanceUpdated',
    when: 'the credit balance (limit − borrowed) changes: a limit change, a pay-out, a payment',
    sentTo: { resource: 'company', property: 'company' },
    ids: 'companyId',
    example: { message: 2, withdrawalId: null, companyId: COMPANY, limitRequestId: null, loanId: null },
    readNext: [COMPANY_STATUS],
  },
  {
    code: CallbackMessage.LimitRequestStatusChanged,
    name: 'LimitRequestStatusChanged',
    when: "a limit request's status changes",
    sentTo: { resource: 'limit request', property: 'status_callback' },
    ids: 'companyId, limitRequestId',
    example: { message: 3, withdrawalId: null, companyId: COMPANY, limitRequestId: LIMIT_REQUEST, loanId: null },
    readNext: [{ path: 'GET /v1/companies/{companyId}/limit-requests/{limitRequestId}/status' }],
  },
  {
    code: CallbackMessage.LoanPaymentRegistered,
    name: 'LoanPaymentRegistered',
    when: 'a payment is registered on a loan',
    sentTo: { resource: 'withdrawal request', property: 'loan_status_callback' },
    ids: 'companyId, loanId, withdrawalId',
    example: { message: 4, withdrawalId: WITHDRAWAL, companyId: COMPANY, limitRequestId: null, loanId: LOAN },
    readNext: [{ path: 'GET /v1/companies/{companyId}/loans/{loanId}' }],
  },
];

const DESTINATION = 'https://hooks.example.com';
const ORIGIN = "the destination's origin (scheme, host and port of your callback URLs)";
const WAITING = 'counted among 1000 of its waiting callbacks; at that cap, at least that many';

/**
 * Every operational event (API §5, "Operational events"; docs/partners.md, "Operational events"):
 * the source of the OpenAPI document's description and examples of the POST to the operationsUrl,
 * and of the portal's catalogue.
 */
export const OPERATIONAL_EVENTS: readonly OperationalEventEntry[] = [
  {
    type: 'destination.failing',
    when: 'one of your destinations (an origin of your callback URLs) opened its circuit: its last attempts failed',
    data: {
      destination: ORIGIN,
      since: 'when its circuit opened',
      lastError: 'the last failed attempt, as in the delivery log',
      waiting: `your callbacks waiting for it at that moment (${WAITING})`,
    },
    example: {
      type: 'destination.failing',
      timestamp: '2026-11-20T09:14:03.512Z',
      data: { destination: DESTINATION, since: '2026-11-20T09:14:03.512Z', lastError: 'HTTP 503', waiting: 42 },
    },
    act: 'fix the receiver; the callbacks wait, and one at a time probes it until it answers',
  },
  {
    type: 'destination.recovered',
    when: 'a probe was answered: the circuit closed',
    data: {
      destination: ORIGIN,
      failingSince: 'when its circuit had opened',
      recoveredAt: 'when it closed',
      waiting: `your callbacks left to deliver, now going out (${WAITING})`,
    },
    example: {
      type: 'destination.recovered',
      timestamp: '2026-11-20T09:31:47.020Z',
      data: {
        destination: DESTINATION,
        failingSince: '2026-11-20T09:14:03.512Z',
        recoveredAt: '2026-11-20T09:31:47.020Z',
        waiting: 42,
      },
    },
    act: "nothing: the waiting callbacks follow at the destination's pace",
  },
  {
    type: 'callbacks.failed',
    when: 'callbacks of a destination became failed: after their last attempt, a 410, or an outage past their schedule',
    data: {
      destination: ORIGIN,
      count: 'how many became failed',
      from: 'when the first of them failed',
      to: 'when the last of them failed',
    },
    example: {
      type: 'callbacks.failed',
      timestamp: '2026-11-21T13:05:00.000Z',
      data: { destination: DESTINATION, count: 3, from: '2026-11-21T13:00:12.250Z', to: '2026-11-21T13:04:58.901Z' },
    },
    act: 'fix the cause, then redeliver them (POST /v1/callbacks/redeliver with since and destination)',
  },
  {
    type: 'operations.test',
    when: "you pressed Send a test event in the portal's Settings: sent once, one attempt, nothing happened",
    data: {},
    example: { type: 'operations.test', timestamp: '2026-11-21T14:00:00.000Z', data: {} },
    act: 'nothing: check that your receiver verified its signature and answered 2xx',
  },
];

/** A message's catalogue entry. */
export function catalogueEntry(code: CallbackMessage): CallbackMessageEntry {
  return CALLBACK_MESSAGES.find((e) => e.code === code)!;
}

/** The entry's read paths for a variant (both variants' when none is given), as one line. */
export function readNextText(entry: CallbackMessageEntry, variant?: 'A' | 'B'): string {
  const paths = entry.readNext.filter((r) => !variant || !r.variant || r.variant === variant);
  return paths.map((r) => (r.variant && !variant ? `${r.path} (variant ${r.variant})` : r.path)).join(', ');
}
