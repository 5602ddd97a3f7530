// The first import of main.ts: starts OpenTelemetry before anything it instruments (node:http,
// pg, ioredis) is loaded, and only when an OTLP endpoint is configured. Otherwise this file
// loads nothing and tracing costs nothing: no SDK, no instrumentation, no hooks (trace-context.ts).
import type { TracingSdk } from './tracing-sdk.js';

/** Whether the environment asks for traces: the standard OTLP endpoint variables (docs/configuration.md). */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  const set = (name: string) => (env[name] ?? '').trim() !== '';
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  if ((env.OTEL_TRACES_EXPORTER ?? '').trim().toLowerCase() === 'none') return false;
  return set('OTEL_EXPORTER_OTLP_ENDPOINT') || set('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
}

let sdk: TracingSdk | null = null;

if (tracingRequested(process.env)) {
  // Loaded lazily, so that with tracing off not one OpenTelemetry module is read.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  sdk = (require('./tracing-sdk.js') as typeof import('./tracing-sdk.js')).startTracing(process.env);
}

/** Exports the spans still buffered (shutdown); nothing when tracing is off. */
export async function stopTracing(): Promise<void> {
  await sdk?.stop();
}
