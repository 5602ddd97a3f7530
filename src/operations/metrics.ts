import { DeliveryCounts, DestinationSummaries } from '../callbacks/index.js';
import { ClientCertificateExpiries } from '../partners/index.js';
import { NoQuery } from '../platform/index.js';
import { Access } from '../operators/index.js';
import { Controller, Get, Header, Injectable } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { registerClientCertificateGauge } from './client-certificate-gauge.js';
import { registerDeliveryGauges } from './delivery-gauges.js';
import { registerOpenDestinationsGauge } from './open-destinations-gauge.js';
import { registerProcessMemoryGauges } from './process-memory-gauges.js';

/** One registry per application instance (tests boot several in one process). */
@Injectable()
export class Metrics {
  readonly registry = new Registry();
  readonly attempts = new Counter({
    name: 'funding_callback_attempts_total',
    help:
      'Callback delivery attempts by outcome (delivered, retry, failed) ' +
      'and kind (http, timeout, network, tls, refused)',
    labelNames: ['result', 'kind'] as const,
    registers: [this.registry],
  });
  readonly attemptDuration = new Histogram({
    name: 'funding_callback_attempt_duration_seconds',
    help: 'Duration of one callback HTTP attempt',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15],
    registers: [this.registry],
  });
  readonly relayLag = new Histogram({
    name: 'funding_callback_relay_lag_seconds',
    help: 'Time from a callback being recorded to its admission to a worker (first attempt)',
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
    registers: [this.registry],
  });
  readonly endToEnd = new Histogram({
    name: 'funding_callback_delivery_latency_seconds',
    help: 'Time from a callback being recorded to its successful delivery',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 60, 600, 3600, 36000],
    registers: [this.registry],
  });

  readonly circuitTransitions = new Counter({
    name: 'funding_destination_circuit_transitions_total',
    help: 'Destination circuit transitions: opened, reopened (a failed probe), closed',
    labelNames: ['transition'] as const,
    registers: [this.registry],
  });
  readonly expiredWhileWaiting = new Counter({
    name: 'funding_callbacks_expired_waiting_total',
    help: "Callbacks failed because their schedule ended while their destination's circuit was open",
    registers: [this.registry],
  });
  readonly recordFailures = new Counter({
    name: 'funding_callback_record_failures_total',
    help:
      'Attempt records PostgreSQL refused (batch: retried one by one; single: retried once without the answer; ' +
      'lost: refused again, or PostgreSQL out of reach past the patience)',
    labelNames: ['stage'] as const,
    registers: [this.registry],
  });
  readonly admissionPasses = new Counter({
    name: 'funding_admission_passes_total',
    help:
      'Admission passes completed by this process ' +
      '(about one a second while it leads admission; 0 on workers and standbys)',
    registers: [this.registry],
  });
  /** Set by each admission pass (Admission.noteOldestDue); stale (this process stopped leading): 0. */
  private oldestDue = { at: -Infinity, seconds: 0 };
  readonly oldestDueGauge = new Gauge({
    name: 'funding_callback_oldest_due_seconds',
    help:
      'How long the longest-due pending callback of a destination whose circuit is closed has been due, ' +
      "as the admission leader's last pass saw it (0: none due, or this process does not lead admission)",
    registers: [this.registry],
    collect: () => {
      const fresh = performance.now() - this.oldestDue.at < OLDEST_DUE_FRESH_MS;
      this.oldestDueGauge.set(fresh ? this.oldestDue.seconds : 0);
    },
  });
  readonly retentionPruned = new Counter({
    name: 'funding_retention_pruned_rows_total',
    help: 'Rows deleted by retention (CALLBACK_RETENTION; idempotency keys after 24 h), by table',
    labelNames: ['table'] as const,
    registers: [this.registry],
  });

  noteOldestDue(seconds: number): void {
    this.oldestDue = { at: performance.now(), seconds };
  }

  constructor(delivery: DeliveryCounts, summaries: DestinationSummaries, expiries: ClientCertificateExpiries) {
    registerDeliveryGauges(this.registry, delivery);
    registerClientCertificateGauge(this.registry, expiries);
    registerOpenDestinationsGauge(this.registry, summaries);
    registerProcessMemoryGauges(this.registry);
    // Two bounded index scans per scrape, whatever the table's size (counting every row by status
    // grows with the table). Delivered callbacks are counted by
    // funding_callback_attempts_total{result="delivered"} instead.
    new Gauge({
      name: 'funding_callbacks',
      help: `Callbacks pending or failed, counted up to ${CALLBACK_GAUGE_CAP} (at the cap: at least that many)`,
      labelNames: ['status'] as const,
      registers: [this.registry],
      async collect() {
        const counts = await delivery.countPendingAndFailed(CALLBACK_GAUGE_CAP);
        this.reset();
        this.set({ status: 'pending' }, counts.pending);
        this.set({ status: 'failed' }, counts.failed);
      },
    });
  }
}

/** An admission pass runs at least each second while this process leads; older figures are not its. */
const OLDEST_DUE_FRESH_MS = 10_000;

/** How far the callbacks gauge counts: bounds a scrape's cost (an index scan of at most this many entries). */
export const CALLBACK_GAUGE_CAP = 100_000;

@ApiTags('operations')
@Access.anyone()
@Controller()
export class MetricsController {
  constructor(private readonly metrics: Metrics) {}

  /** Prometheus text format; unauthenticated like /health: expose it on the internal network only. */
  @ApiOperation({ summary: 'Prometheus metrics, text format (no authentication: keep it on the internal network)' })
  @ApiProduces('text/plain')
  @ApiResponse({ status: 200, description: 'Prometheus text exposition format 0.0.4', schema: { type: 'string' } })
  @NoQuery()
  @Get('metrics')
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  metricsText(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
