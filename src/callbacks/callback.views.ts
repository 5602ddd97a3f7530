import { Callback, CallbackAttempt } from './callback.entity.js';
import { CallbackMessage } from './callback-message.js';
import { shownStatus } from './callback-status.js';
import { NO_OPEN_CIRCUITS, nextAttemptShown, OpenCircuits } from './circuit-wait.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * A callback as the API and the portal show it; `open`: the open circuits it may wait behind (its
 * nextAttemptAt is then their next probe: circuit-wait.ts).
 */
export function callbackView(c: Callback, open: OpenCircuits = NO_OPEN_CIRCUITS) {
  const circuit = open.byKey.get(c.destination) ?? null;
  const own = { status: c.status, nextAttemptAt: c.nextAttemptAt?.getTime() ?? null };
  return {
    id: c.id,
    message: c.message,
    name: CallbackMessage[c.message],
    url: c.url,
    body: JSON.parse(c.body) as unknown,
    status: shownStatus(c.status),
    attemptCount: c.attemptCount,
    nextAttemptAt: iso(nextAttemptShown(own, circuit, open.now)),
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
