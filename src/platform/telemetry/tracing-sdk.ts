// OpenTelemetry, loaded by tracing.ts only when an OTLP endpoint is configured. Traces only:
// metrics stay on /metrics (Prometheus) and logs on stdout (docs/operations.md, "Traces").
import { context, isSpanContextValid, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { IncomingMessage } from 'node:http';
import { redactSecrets, targetCarriesLinkToken } from '../logging/redact.js';
import {
  AttemptSpanAttributes,
  formatTraceparent,
  installTraceHooks,
  parseTraceparent,
  TraceHooks,
} from './trace-context.js';

/** Requests that are not worth a trace: probes and scrapes every few seconds. */
const UNTRACED_PATHS = new Set(['/health', '/ready', '/metrics']);

/** Spans are flushed at shutdown for at most this long: a collector that is down does not hold the process. */
const SHUTDOWN_FLUSH_MS = 5000;

export interface TracingSdk {
  stop(): Promise<void>;
}

/** http/protobuf (the standard's default) or http/json; src/platform/config refuses any other protocol at start. */
function traceExporter(env: NodeJS.ProcessEnv) {
  const protocol =
    (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? '').trim() || 'http/protobuf';
  return protocol === 'http/json' ? new JsonTraceExporter() : new ProtobufTraceExporter();
}

export function startTracing(env: NodeJS.ProcessEnv): TracingSdk {
  const named =
    (env.OTEL_SERVICE_NAME ?? '').trim() !== '' || /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const sdk = new NodeSDK({
    serviceName: named ? undefined : 'funding-service',
    traceExporter: traceExporter(env),
    // Traces only (the SDK would otherwise also export metrics and logs over OTLP by default).
    metricReaders: [],
    logRecordProcessors: [],
    // No propagator: no trace header is read from API callers (the request's server span is the
    // root; a caller cannot attach its changes to a trace, or force sampling) and none is ever
    // written to a partner's callback. The context travels with the callback row instead.
    textMapPropagator: null,
    instrumentations: [
      new HttpInstrumentation({
        // Outgoing requests are partners' callbacks: not instrumented, so nothing is injected
        // into them and no span holds their URL (query strings may carry partners' secrets).
        // The attempt span (below) stands for each.
        disableOutgoingRequestInstrumentation: true,
        // A request carrying a portal link's token (`/portal/login?token=`) is no trace either: the
        // span's target would hold the token, a credential. Read as Fastify reads the query, so no
        // spelling of it (`tok%65n=`, `token[]=`, `%66sp_…`) is traced.
        ignoreIncomingRequestHook: (req: IncomingMessage) =>
          UNTRACED_PATHS.has((req.url ?? '').split('?')[0]) || targetCarriesLinkToken(req.url ?? ''),
      }),
      // Only inside a request or an attempt: the relay's and the workers' own polling is no trace.
      new PgInstrumentation({ requireParentSpan: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  sdk.start();
  installTraceHooks(hooks());
  return {
    stop: () =>
      Promise.race([sdk.shutdown(), new Promise<void>((r) => setTimeout(r, SHUTDOWN_FLUSH_MS).unref())]).catch(
        () => undefined,
      ),
  };
}

function activeContext() {
  const span = trace.getSpan(context.active());
  const c = span?.spanContext();
  return c && isSpanContextValid(c) ? c : null;
}

function hooks(): TraceHooks {
  const tracer = trace.getTracer('funding-service');
  return {
    traceparent() {
      const c = activeContext();
      return c ? formatTraceparent(c.traceId, c.spanId, c.traceFlags) : null;
    },
    logIds() {
      const c = activeContext();
      return c ? { trace_id: c.traceId, span_id: c.spanId } : null;
    },
    attempt(parent, a: AttemptSpanAttributes, fn) {
      const p = parseTraceparent(parent);
      const base = p ? trace.setSpanContext(ROOT_CONTEXT, { ...p, isRemote: true }) : ROOT_CONTEXT;
      const attributes = {
        'funding.callback.id': a.callbackId,
        'funding.callback.message': a.message,
        'funding.callback.destination': a.destination,
        'funding.callback.attempt': a.attempt,
      };
      return tracer.startActiveSpan('callback attempt', { kind: SpanKind.CLIENT, attributes }, base, async (span) => {
        try {
          return await fn({
            end: (o) => {
              if (o.statusCode !== null) span.setAttribute('http.response.status_code', o.statusCode);
              span.setAttribute('funding.callback.status', o.status);
              if (o.error !== null) {
                span.setAttribute('error.type', o.statusCode !== null ? String(o.statusCode) : o.kind);
                span.setStatus({ code: SpanStatusCode.ERROR, message: redactSecrets(o.error) });
              }
            },
          });
        } catch (e) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: (e as Error)?.message });
          throw e;
        } finally {
          span.end();
        }
      });
    },
    untraced: (fn) => context.with(ROOT_CONTEXT, fn),
    nameServerSpan(method, route) {
      const span = trace.getSpan(context.active());
      span?.updateName(`${method} ${route}`);
      span?.setAttribute('http.route', route);
    },
  };
}
