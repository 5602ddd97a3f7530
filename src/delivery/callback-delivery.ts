import { DeliveryLoads, LoadedCallback, originOfKey } from '../callbacks/index.js';
import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  APP_CONFIG,
  AppConfig,
  Batcher,
  inAttemptSpan,
  RepeatLimitedLog,
  SecretBox,
  signatureHeader,
  Signer,
} from '../platform/index.js';
import { Metrics } from '../operations/index.js';
import { ClientTlsStore } from '../partners/index.js';
import { CallbackSender, type ClientTls, SendRequest } from '../egress/index.js';
import { SigningKeyCache } from './signing-key-cache.js';
import { SettledAttempt, SettlingRow } from './settle-attempt.js';
import { Settlement } from './settlement.js';

interface DeliveryRow extends LoadedCallback, SettlingRow {
  /** Set by the load: the prepared signers of the partner's keys. */
  signers: Signer[];
}

/**
 * The attempt must end within what is left of the lease, with this to spare for its record:
 * otherwise the lease could lapse mid-attempt and the callback be admitted and sent again.
 */
export const LEASE_SPARE_MS = 5000;

/** The `result` label of funding_callback_attempts_total for what an attempt of the schedule came to. */
const ATTEMPT_RESULT: Record<SettledAttempt['status'], string> = {
  delivered: 'delivered',
  pending: 'retry',
  failed: 'failed',
};

/**
 * One delivery, for one callback of a job: load the callback (the database is the record of
 * truth; the callbacks of a tick load together), sign the stored body, POST it, and settle the
 * outcome. A callback that is not `sending` under this job's lease (a duplicate job, a lapsed
 * lease, admitted again since) is left alone, and so is one whose lease has too little left for
 * an attempt (it waited for a slot here): it lapses and is admitted again.
 */
@Injectable()
export class CallbackDelivery {
  private readonly log = new Logger('CallbackDelivery');
  private readonly userAgent: string;
  private readonly loads = new Batcher<string, DeliveryRow | undefined>((ids) => this.loadMany(ids));
  private readonly attemptMs: number;
  private readonly shortLeases = new RepeatLimitedLog((m) => this.log.warn(m));
  private readonly keys: SigningKeyCache;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly sender: CallbackSender,
    private readonly settlement: Settlement,
    private readonly metrics: Metrics,
    box: SecretBox,
    private readonly clientTls: ClientTlsStore,
    private readonly store: DeliveryLoads,
  ) {
    this.keys = new SigningKeyCache(box);
    this.userAgent = `funding-service-callbacks/${config.version}`;
    this.attemptMs = config.callbackTimeoutMs + LEASE_SPARE_MS;
  }

  async deliver(callbackId: string, lease: string): Promise<SettledAttempt | null> {
    const row = await this.loads.call(callbackId);
    if (!row || row.status !== 'sending' || row.lease !== lease) return null;
    if (row.lease_left_ms! < this.attemptMs) {
      this.shortLeases.warn(
        'callbacks not sent: they waited for a delivery slot until too little of their lease was left ' +
          'for an attempt; each is admitted again when its lease lapses',
      );
      return null;
    }
    const clientTls = row.client_tls_id === null ? null : await this.certificateOf(row.id, row.client_tls_id);
    if (clientTls === undefined) return null;
    const attempt = {
      callbackId: row.id,
      message: row.message,
      destination: originOfKey(row.destination),
      attempt: row.attempt_count + 1,
    };
    return inAttemptSpan(row.trace_parent, attempt, async (span) => {
      const startedAt = Date.now();
      const request = this.signed(row, Math.floor(startedAt / 1000));
      const result = await this.sender.send({ ...request, clientTls });
      const settled = await this.settlement.settle({
        row,
        startedAt,
        answeredAt: Date.now(),
        result,
        sent: request.headers,
      });
      if (settled) {
        this.metrics.attempts.inc({
          result: settled.counts ? ATTEMPT_RESULT[settled.status] : 'probe_failed',
          kind: result.outcome.kind,
        });
        this.metrics.attemptDuration.observe(result.durationMs / 1000);
        if (settled.status === 'delivered') this.metrics.endToEnd.observe((Date.now() - row.created_at) / 1000);
      }
      // Unrecorded (settlement gave up on PostgreSQL): the lease brings it back.
      span.end({
        kind: result.outcome.kind,
        statusCode: result.statusCode,
        error: result.error,
        status: settled?.status ?? 'unrecorded',
      });
      return settled;
    });
  }

  /** The callback's stored body as sent at `timestamp` (epoch seconds), signed with its partner's keys. */
  private signed(row: DeliveryRow, timestamp: number): SendRequest {
    return {
      url: row.url,
      body: row.body,
      headers: {
        'content-type': 'application/json',
        'user-agent': this.userAgent,
        'webhook-id': row.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(row.signers, row.id, timestamp, row.body),
      },
    };
  }

  /**
   * The partner's client certificate upload (null: removed since the load). A callback whose
   * certificate this process cannot read (PostgreSQL out of reach, its key's SECRETS_KEY entry
   * missing) is not sent without it: undefined, and it stays `sending` until its lease lapses, as
   * for a signing key.
   */
  private async certificateOf(callbackId: string, uploadId: string): Promise<ClientTls | null | undefined> {
    try {
      return await this.clientTls.get(uploadId);
    } catch (e) {
      this.log.error(
        `callback ${callbackId} not sent: its partner's client certificate could not be read: ${(e as Error).message}`,
      );
      return undefined;
    }
  }

  /** Many deliveries' rows in one query (the hot path bypasses the ORM for the raw pool). */
  private async loadMany(ids: string[]): Promise<(DeliveryRow | undefined)[]> {
    const rows = (await this.store.load(ids)) as DeliveryRow[];
    const byId = new Map<string, DeliveryRow>();
    // Signing keys are sealed at rest (secret-box.ts) and opened in memory only, once per key
    // (SigningKeyCache). A row whose key this process cannot open (its SECRETS_KEY entry missing, or
    // sealed for another partner's row) is not sent unsigned: it stays `sending` until its lease
    // lapses, for a process that can, logged each time.
    for (const r of rows) {
      try {
        r.signers = this.keys.signersOf(r.partner_id, r.signing_secret, r.previous_signing_secret);
        byId.set(r.id, r);
      } catch (e) {
        this.log.error(`callback ${r.id} not sent: ${(e as Error).message}`);
      }
    }
    return ids.map((id) => byId.get(id));
  }
}
