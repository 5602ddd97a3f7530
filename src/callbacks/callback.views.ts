import { Callback, CallbackAttempt } from './callback.entity.js';
import { CallbackMessage } from './callback-message.js';
import { shownStatus } from './callback-status.js';

export function callbackView(c: Callback) {
  return {
    id: c.id,
    message: c.message,
    name: CallbackMessage[c.message],
    url: c.url,
    body: JSON.parse(c.body) as unknown,
    status: shownStatus(c.status),
    attemptCount: c.attemptCount,
    nextAttemptAt: (c.status === 'pending' || c.status === 'sending') && c.nextAttemptAt ? c.nextAttemptAt.toISOString() : null,
    lastError: c.lastError,
    companyId: c.companyId,
    createdAt: c.createdAt.toISOString(),
    deliveredAt: c.deliveredAt?.toISOString() ?? null,
    test: c.test,
  };
}

export function attemptView(a: CallbackAttempt) {
  return {
    number: a.number,
    startedAt: a.startedAt.toISOString(),
    durationMs: a.durationMs,
    statusCode: a.statusCode,
    error: a.error,
    responseBody: a.responseBody,
    sourceAddress: a.sourceAddress,
  };
}
