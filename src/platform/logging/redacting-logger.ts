import { ConsoleLogger, LogLevel } from '@nestjs/common';
import { inspect } from 'node:util';
import type { LogFormat } from '../config/app-config.js';
import { logTraceIds } from '../telemetry/trace-context.js';
import { redactSecrets } from './redact.js';

export { redactSecrets } from './redact.js';

/** The context of the service's own lines (start, ready, a failed start). */
const SERVICE_CONTEXT = 'funding-service';

type JsonLine = Parameters<ConsoleLogger['printAsJson']>[1];

/**
 * Nest's console logger for the service's stdout (docs/operations.md, "Logs"), every level on
 * stdout (one stream, in order), every line passed through redactSecrets:
 * - `json`: one object a line, `{"time","level","context","msg"}`, with `trace_id`/`span_id`
 *   inside a traced request or delivery and `stack`/`error` for errors; never a colour code.
 * - `text`: Nest's lines, coloured only when stdout is a terminal.
 * Chosen over nestjs-pino by measurement (docs/development.md, "Logs").
 */
export class RedactingLogger extends ConsoleLogger {
  constructor(format: LogFormat, logLevels: LogLevel[]) {
    super({ json: format === 'json', colors: format === 'text' && process.stdout.isTTY === true, logLevels });
  }

  /** A line of the service's own (ready, a failed start), printed whatever the enabled levels. */
  line(level: 'log' | 'error', msg: string): void {
    this.printMessages([msg], SERVICE_CONTEXT, level, 'stdout');
  }

  protected printMessages(
    messages: unknown[],
    context?: string,
    logLevel?: LogLevel,
    _stream?: 'stdout' | 'stderr',
    errorStack?: unknown,
    params?: Record<string, unknown>,
  ): void {
    super.printMessages(messages, context, logLevel, 'stdout', errorStack, params);
  }

  protected printAsJson(message: unknown, options: JsonLine): void {
    const line: Record<string, unknown> = {
      time: new Date().toISOString(),
      level: options.logLevel,
      context: options.context || SERVICE_CONTEXT,
      msg:
        typeof message === 'string'
          ? message
          : inspect(message, { compact: true, breakLength: Infinity, colors: false }),
    };
    const ids = logTraceIds();
    if (ids) Object.assign(line, ids);
    if (options.errorStack) {
      const stack = options.errorStack;
      line.stack =
        typeof stack === 'string' ? stack : inspect(stack, { compact: true, breakLength: Infinity, colors: false });
    }
    if (options.error) line.error = this.serializeError(options.error);
    if (options.params) line.params = options.params;
    process.stdout.write(`${redactSecrets(this.stringifyJsonLogObject(line))}\n`);
  }

  protected formatMessage(
    logLevel: LogLevel,
    message: unknown,
    pidMessage: string,
    formattedLogLevel: string,
    contextMessage: string,
    timestampDiff: string,
    params?: Record<string, unknown>,
  ): string {
    return redactSecrets(
      super.formatMessage(logLevel, message, pidMessage, formattedLogLevel, contextMessage, timestampDiff, params),
    );
  }

  protected printStackTrace(stack: string): void {
    // JSON lines carry the stack in the line itself.
    if (stack && !this.options.json) process.stdout.write(`${redactSecrets(stack)}\n`);
  }
}
