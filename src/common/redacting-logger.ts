import { ConsoleLogger, LogLevel } from '@nestjs/common';

/**
 * Credentials by their shapes: signing secrets (whsec_), API keys (fsk_), sealed values (enc1:),
 * bearer tokens. Whatever reaches a log line (an error's message, an inspected object) passes here.
 */
const SECRETS: [RegExp, string][] = [
  [/whsec_[A-Za-z0-9+/=]+/g, 'whsec_[redacted]'],
  [/fsk_[A-Za-z0-9_-]+/g, 'fsk_[redacted]'],
  [/fso_[A-Za-z0-9_-]+/g, 'fso_[redacted]'],
  [/enc1:[0-9a-f]{8}:[A-Za-z0-9_-]+/g, 'enc1:[redacted]'],
  [/(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, '$1 [redacted]'],
];

export function redactSecrets(text: string): string {
  return SECRETS.reduce((t, [pattern, replacement]) => t.replace(pattern, replacement), text);
}

/** Nest's console logger with every printed line passed through redactSecrets. */
export class RedactingLogger extends ConsoleLogger {
  protected formatMessage(
    logLevel: LogLevel,
    message: unknown,
    pidMessage: string,
    formattedLogLevel: string,
    contextMessage: string,
    timestampDiff: string,
    params?: Record<string, unknown>,
  ): string {
    return redactSecrets(super.formatMessage(logLevel, message, pidMessage, formattedLogLevel, contextMessage, timestampDiff, params));
  }

  protected printStackTrace(stack: string): void {
    super.printStackTrace(redactSecrets(stack));
  }
}
