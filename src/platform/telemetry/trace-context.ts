// What the rest of the service asks of tracing. When tracing is off (no OTEL_EXPORTER_OTLP_*
// endpoint, tracing.ts) nothing installs hooks: every function here returns at once and the
// OpenTelemetry packages are never loaded (this file imports none of them).

/** What an attempt span records of its attempt. */
export interface AttemptSpanAttributes {
  callbackId: string;
  message: number;
  /** The callback URL's origin (scheme, host, port): never its path or query. */
  destination: string;
  /** This attempt's number among all attempts of the callback (1 = the first). */
  attempt: number;
}

/** How the attempt ended, set once it is settled. */
export interface AttemptSpanOutcome {
  /** success, http, timeout, network or refused (the sender's outcome kinds). */
  kind: string;
  statusCode: number | null;
  error: string | null;
  /** The callback's state after the attempt: delivered, pending (retry or waiting), failed. */
  status: string;
}

export interface AttemptSpan {
  end(outcome: AttemptSpanOutcome): void;
}

/** The ids a log line written inside a traced request or delivery carries. */
export interface LogTraceIds {
  trace_id: string;
  span_id: string;
}

export interface TraceHooks {
  /** The active span's context as a W3C traceparent (stored with the callbacks it causes), or null. */
  traceparent(): string | null;
  logIds(): LogTraceIds | null;
  /** Runs `fn` in an attempt span whose parent is `parent` (a stored traceparent; null: a root span). */
  attempt<T>(
    parent: string | null,
    attributes: AttemptSpanAttributes,
    fn: (span: AttemptSpan) => Promise<T>,
  ): Promise<T>;
  /** Runs `fn` outside any trace: work done for many requests at once (an admission pass). */
  untraced<T>(fn: () => T): T;
  /** Names the active server span by its route (`PATCH /admin/v1/companies/:companyId/credit`). */
  nameServerSpan(method: string, route: string): void;
}

let hooks: TraceHooks | null = null;

/** Called once by tracing-sdk.ts when the SDK has started (null: off again, for tests). */
export function installTraceHooks(h: TraceHooks | null): void {
  hooks = h;
}

const NO_SPAN: AttemptSpan = { end: () => undefined };

/** Whether tracing is on in this process (tracing.ts started the SDK). */
export function tracingActive(): boolean {
  return hooks !== null;
}

export function nameServerSpan(method: string, route: string): void {
  hooks?.nameServerSpan(method, route);
}

export function currentTraceparent(): string | null {
  return hooks ? hooks.traceparent() : null;
}

export function logTraceIds(): LogTraceIds | null {
  return hooks ? hooks.logIds() : null;
}

export function inAttemptSpan<T>(
  parent: string | null,
  attributes: AttemptSpanAttributes,
  fn: (span: AttemptSpan) => Promise<T>,
): Promise<T> {
  return hooks ? hooks.attempt(parent, attributes, fn) : fn(NO_SPAN);
}

export function untraced<T>(fn: () => T): T {
  return hooks ? hooks.untraced(fn) : fn();
}

export interface ParsedTraceparent {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** W3C Trace Context, version 00: `00-<trace id>-<parent span id>-<flags>`. */
export function formatTraceparent(traceId: string, spanId: string, traceFlags: number): string {
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** A stored traceparent, or null when it is not a valid version-00 one (all-zero ids are invalid). */
export function parseTraceparent(value: string | null | undefined): ParsedTraceparent | null {
  const m = TRACEPARENT.exec(value ?? '');
  if (!m || /^0+$/.test(m[1]) || /^0+$/.test(m[2])) return null;
  return { traceId: m[1], spanId: m[2], traceFlags: parseInt(m[3], 16) };
}
