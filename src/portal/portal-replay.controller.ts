import { Get, Post } from '@nestjs/common';
import { BulkReplay, CallbackReads } from '../callbacks/index.js';
import { DestinationsService } from '../delivery/index.js';
import type { PortalIdentity } from '../operators/index.js';
import { operatorActing } from './operator-acting.js';
import { FieldError, parseOrigin, parseTime, queryOf, single, timeField } from './portal-format.js';
import { Action, Done, FormValues, Page, PortalController, QueryValues, Session } from './portal-page.js';

/** Pending callbacks a replay's page counts while it waits (more: "at least"). */
const PENDING_SHOWN = 50;
/** How often a replay's page asks again while some of its window's callbacks are pending (seconds). */
const REFRESH_S = 3;

/** A replay's window as its form gives it: From and To required, Destination optional. */
function windowOf(values: Record<string, unknown>, required: boolean) {
  const since = parseTime('From', single(values, 'from'));
  const until = parseTime('To', single(values, 'to'));
  if (required && (!since || !until)) throw new FieldError('From and To are both required');
  return { since, until, destination: parseOrigin('Destination', single(values, 'destination')) };
}

/**
 * Replay: the failed callbacks created in a window (at one destination, or all) counted first;
 * Replay (a POST) sends them again (the API's bulk redelivery); its page then links to the log of
 * that window and counts what is still pending there, asking again until none is.
 */
@PortalController('replay')
export class PortalReplayController {
  constructor(
    private readonly replay: BulkReplay,
    private readonly reads: CallbackReads,
    private readonly destinations: DestinationsService,
  ) {}

  @Get()
  @Page('replay')
  async page(@Session() s: PortalIdentity, @QueryValues() q: Record<string, unknown>) {
    const { since, until, destination } = windowOf(q, false);
    const origins = (await this.destinations.listForPartner(s.partnerId)).map((d) => d.origin);
    const window = { from: since && timeField(since), to: until && timeField(until), destination };
    const log = `/portal/callbacks?${queryOf(window)}`;
    const replayed = single(q, 'replayed');
    const base = {
      title: 'Replay',
      nav: 'replay',
      q: window,
      since,
      until,
      origins,
      log,
      count: null,
      done: null,
      pending: null,
    };
    if (replayed !== undefined && /^\d{1,7}$/.test(replayed) && since && until) {
      const pending = await this.reads.list(
        { status: 'pending', from: since, to: until, destination, limit: PENDING_SHOWN },
        s,
      );
      const waiting = pending.items.length;
      return {
        ...base,
        done: Number(replayed),
        pending: waiting,
        refresh: waiting > 0 ? REFRESH_S : null,
        more: pending.nextCursor !== null,
      };
    }
    const count = since && until ? await this.replay.countForPartner(s.partnerId, { since, until, destination }) : null;
    return { ...base, count };
  }

  @Post()
  @Action()
  async send(@Session() s: PortalIdentity, @FormValues() form: Record<string, unknown>): Promise<Done> {
    const { since, until, destination } = windowOf(form, true);
    const window = { since: since!, until: until!, destination };
    const actor = operatorActing(s, 'portal.callback.redeliver-failed');
    const count = actor
      ? await this.replay.replayAsOperator(actor, { ...window, partnerId: s.partnerId })
      : await this.replay.replayForPartner(s.partnerId, window);
    const shown = { from: timeField(window.since), to: timeField(window.until), destination };
    return { url: `/portal/replay?${queryOf({ replayed: String(count), ...shown })}` };
  }
}
