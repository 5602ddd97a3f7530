import { Job, KeepJobs, UnrecoverableError } from 'bullmq';
import { CallbackMessage } from '../callbacks/callback-message.js';

/**
 * What the queue dashboard shows of a delivery, written where the delivery happens. BullMQ keeps
 * job names, logs and errors in Redis in clear and shows them to whoever holds the operator
 * credential, so none of these carries a secret, a body, or a URL's path or query (which may
 * carry a partner's token): a destination is its origin only.
 */

/** A destination as the dashboard names it: scheme, host and port, nothing else. */
export function destinationOrigin(url: string): string {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? '(no origin)' : origin;
  } catch {
    return '(invalid URL)';
  }
}

/** Any URL inside a message (an error may quote one) cut to its origin. */
export function withoutUrlPaths(text: string): string {
  return text.replace(/\bhttps?:\/\/[^\s"'<>]+/gi, (u) => destinationOrigin(u));
}

/** The job's name: which callback this is, readable in a list of thousands. */
export function callbackJobName(c: { message: number; companyId: string; destination: string }): string {
  const name = CallbackMessage[c.message] ?? 'Unknown';
  return `${c.message} ${name} · company ${c.companyId} · ${destinationOrigin(c.destination)}`;
}

export interface AttemptEntry {
  number: number;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  sourceAddress: string | null;
  /** What follows: delivered, a retry at a time, failed (dead letter). */
  outcome: { action: 'delivered' } | { action: 'retry'; at: Date } | { action: 'fail'; reason: string };
}

/** One line of the job's log per attempt. */
export function attemptLogLine(a: AttemptEntry): string {
  const answer = a.error ?? (a.statusCode !== null ? `HTTP ${a.statusCode}` : 'no answer');
  const what =
    a.outcome.action === 'delivered' ? 'delivered' : a.outcome.action === 'retry' ? `retry at ${a.outcome.at.toISOString()}` : `failed: ${a.outcome.reason}`;
  return withoutUrlPaths(`attempt ${a.number}: ${answer} in ${a.durationMs} ms from ${a.sourceAddress ?? 'unknown address'} → ${what}`);
}

/**
 * Writes the attempt, if one was made, to the job's log. Not awaited: the lines of a tick go to
 * Redis together, off the delivery's path; a lost line costs nothing but the line.
 */
export function journal(
  log: { log(id: string, line: string): Promise<void> },
  jobId: string,
  result: { attempt?: AttemptEntry } | { delivered: AttemptEntry } | { failed: AttemptEntry },
): void {
  const attempt = 'delivered' in result ? result.delivered : 'failed' in result ? result.failed : result.attempt;
  if (attempt) log.log(jobId, attemptLogLine(attempt)).catch(() => undefined);
}

/**
 * A dead letter as BullMQ's failed job: never retried by BullMQ (the dashboard's Retry is a
 * redelivery), its error the callback's last error. The stack is the reason alone: the Error tab
 * shows the stack, and ours would only show this service's file paths.
 */
export function deadLetter(reason: string): UnrecoverableError {
  const e = new UnrecoverableError(withoutUrlPaths(reason));
  e.stack = e.message;
  return e;
}

/** A dashboard window as BullMQ's keep-jobs option (age in seconds). */
export function keepJobs(w: { count: number; ageMs: number }): KeepJobs {
  return { count: w.count, age: Math.ceil(w.ageMs / 1000) };
}
