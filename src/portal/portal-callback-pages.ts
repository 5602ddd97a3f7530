import { Inject, Injectable } from '@nestjs/common';
import { attemptView, callbackOrigin, CallbackReads, callbackView } from '../callbacks/index.js';
import { endedByOutage, RetryPolicy } from '../delivery/index.js';
import { APP_CONFIG, type AppConfig } from '../platform/index.js';
import { ANSWER_KEPT, answerText, kindLabel, requestText } from './attempt-exchange.js';
import { outlookOf, Schedule } from './callback-outlook.js';

type Found = Awaited<ReturnType<CallbackReads['get']>>;

/** A page waiting for a result asks again this often at least, and at most this rarely (seconds). */
const SOONEST_S = 2;
const LATEST_S = 30;

/**
 * Seconds until a page showing a callback asks again: while it is pending, a second after its
 * next attempt is due (within 2–30 s); none once it settled.
 */
export function refreshOf(status: string, nextAttemptAt: string | null, now: number): number | null {
  if (status !== 'pending') return null;
  const due = nextAttemptAt === null ? SOONEST_S : Math.ceil((Date.parse(nextAttemptAt) - now) / 1000) + 1;
  return Math.min(LATEST_S, Math.max(SOONEST_S, due));
}

/**
 * One callback as the portal's pages show it (its own page, the test page): the API's view of it
 * and its attempts, each attempt's place in a schedule and what comes next (callback-outlook.ts),
 * and when the page asks again while it waits.
 */
@Injectable()
export class CallbackPages {
  private readonly schedule: Schedule;

  constructor(
    private readonly reads: CallbackReads,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    const policy = new RetryPolicy(config.callbackRetryScheduleMs);
    this.schedule = { maxAttempts: policy.maxAttempts, totalMs: policy.totalMs, endedByOutage };
  }

  /** The partner's own callback (another partner's: 404, as in the API). */
  async detail(partnerId: string, id: string) {
    return this.shown(await this.reads.get(id, { partnerId }));
  }

  private shown({ callback, attempts, open }: Found) {
    const c = callbackView(callback, open);
    const circuit = open.byKey.get(callback.destination) ?? null;
    const outlook = outlookOf({ ...callback, nextAttemptAt: c.nextAttemptAt }, attempts, circuit, this.schedule);
    return {
      c,
      origin: callbackOrigin(callback.url),
      body: callback.body,
      attempts: attempts.map((a) => ({
        ...attemptView(a),
        kind: kindLabel(a) ?? outlook.kinds.get(a.number) ?? '',
        request: requestText(a.requestHeaders),
        answer: answerText(a.responseStatus, a.responseHeaders),
      })),
      next: outlook.next,
      // What the rows could not place (attempts recorded before kinds were kept).
      note: attempts.every((a) => a.kind !== null) ? null : outlook.note,
      refresh: refreshOf(c.status, c.nextAttemptAt, open.now),
      answerKept: ANSWER_KEPT,
    };
  }
}
