import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { CallbackMessage } from './callback-message.js';

/** `sending`: admitted to a worker (its lease running); the API shows it as `pending`. */
import type { CallbackStatus } from './callback-status.js';

export type { CallbackStatus };

/** The outbox row: written in the same transaction as the change it reports. */
@Entity('callbacks')
export class Callback {
  @PrimaryGeneratedColumn('uuid') id: string;
  /** Insertion order; the list cursor and the relay's claim order. */
  @Column({ type: 'bigint', insert: false, update: false }) seq: string;
  @Column('uuid', { name: 'partner_id' }) partnerId: string;
  /** Null only on an operational event's delivery (`eventType`), which no callback list shows. */
  @Column('uuid', { name: 'company_id' }) companyId: string;
  @Column('smallint') message: CallbackMessage;
  /** An operational event's delivery (operational_events, same id): its type; null for a callback. */
  @Column('text', { name: 'event_type', nullable: true, select: false }) eventType: string | null;
  @Column('text') url: string;
  /** The URL's origin: the unit of concurrency limits and circuit breaking. */
  @Column({ type: 'text', insert: false, update: false }) destination: string;
  /** The exact JSON sent: serialized once at the change, signed and sent as these bytes. */
  @Column('text') body: string;
  @Column('text') status: CallbackStatus;
  /** Every attempt ever made, for the log. */
  @Column('integer', { name: 'attempt_count', default: 0 }) attemptCount: number;
  /** Attempts since the last (re)delivery request: the retry schedule counts these. */
  @Column('integer', { name: 'schedule_attempts', default: 0 }) scheduleAttempts: number;
  @Column('timestamptz', { name: 'next_attempt_at', nullable: true }) nextAttemptAt: Date | null;
  /** While `sending`: when the admission lapses if no worker settles it (its process died). */
  @Column('timestamptz', { name: 'lease_until', nullable: true }) leaseUntil: Date | null;
  /** Creation or the last redelivery: the retry schedule runs from here. */
  @Column({ type: 'timestamptz', name: 'schedule_started_at', insert: false, update: false }) scheduleStartedAt: Date;
  @Column('text', { name: 'last_error', nullable: true }) lastError: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @Column('timestamptz', { name: 'delivered_at', nullable: true }) deliveredAt: Date | null;
  /** A test callback (POST /v1/callbacks/test): one attempt, not in the feed, changes nothing. */
  @Column('boolean', { default: false }) test: boolean;
  /** Attempts its schedule allows when fewer than the deployment's (a test callback: 1); null: the whole schedule. */
  @Column('integer', { name: 'attempt_limit', nullable: true }) attemptLimit: number | null;
  /** When the partner removed the URL this callback was for: it cannot be redelivered. */
  @Column('timestamptz', { name: 'url_removed_at', nullable: true }) urlRemovedAt: Date | null;
  /**
   * Where its next attempt goes: the URL the partner moved it to while an attempt was under way (it
   * moves when that attempt settles).
   */
  @Column('text', { name: 'next_url', nullable: true }) nextUrl: string | null;
  /** The repair that last restarted its schedule, if any: its next first attempt is that one's. */
  @Column('text', { name: 'restarted_by', nullable: true, select: false }) restartedBy: 'redelivery' | 'replay' | null;
  /** The traceparent of the request that recorded it (tracing on): its attempts' spans join that trace. */
  @Column('text', { name: 'trace_parent', nullable: true, select: false }) traceParent: string | null;
}

@Entity('callback_attempts')
export class CallbackAttempt {
  @PrimaryGeneratedColumn('identity', { type: 'bigint' }) id: string;
  @Column('uuid', { name: 'callback_id' }) callbackId: string;
  /** Its callback's partner (the portal's chart reads a partner's attempts by it). */
  @Column('uuid', { name: 'partner_id' }) partnerId: string;
  @Column('integer') number: number;
  @Column('timestamptz', { name: 'started_at' }) startedAt: Date;
  @Column('integer', { name: 'duration_ms' }) durationMs: number;
  @Column('integer', { name: 'status_code', nullable: true }) statusCode: number | null;
  @Column('text', { nullable: true }) error: string | null;
  @Column('text', { name: 'response_body', nullable: true }) responseBody: string | null;
  @Column('text', { name: 'source_address', nullable: true }) sourceAddress: string | null;
  /** What it was (AttemptKind); null on attempts recorded before kinds were kept. */
  @Column('text', { nullable: true }) kind: AttemptKind | null;
  /** Its place in its callback's schedule (1: the first attempt), and how many that schedule allowed. */
  @Column('integer', { name: 'schedule_number', nullable: true }) scheduleNumber: number | null;
  @Column('integer', { name: 'schedule_allows', nullable: true }) scheduleAllows: number | null;
  /** The request's headers as sent (webhook-id, webhook-timestamp, webhook-signature, content type, user agent). */
  @Column('jsonb', { name: 'request_headers', nullable: true }) requestHeaders: Record<string, string> | null;
  /** The answer's status line (`HTTP/1.1 500 Internal Server Error`) and its headers, bounded (null: no answer). */
  @Column('text', { name: 'response_status', nullable: true }) responseStatus: string | null;
  @Column('jsonb', { name: 'response_headers', nullable: true }) responseHeaders: [string, string][] | null;
}

/**
 * What an attempt was: its callback's first, a retry of its schedule, the probe of its open
 * destination, the first after a redelivery or a replay restarted its schedule, a test callback's one.
 */
export const ATTEMPT_KINDS = ['first', 'retry', 'probe', 'redelivery', 'replay', 'test'] as const;
export type AttemptKind = (typeof ATTEMPT_KINDS)[number];
