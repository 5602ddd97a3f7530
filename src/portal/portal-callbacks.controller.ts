import { Get, Param, Post } from '@nestjs/common';
import {
  CallbackMessage,
  callbackOrigin,
  CallbackReads,
  callbackView,
  Redelivery,
  SHOWN_STATUSES,
} from '../callbacks/index.js';
import { DestinationsService } from '../delivery/index.js';
import { CompaniesService } from '../funding/index.js';
import type { PortalIdentity } from '../operators/index.js';
import { DomainError, statusOf } from '../platform/index.js';
import { CallbackPages } from './portal-callback-pages.js';
import {
  FieldError,
  parseChoice,
  parseMessage,
  parseOrigin,
  parseTime,
  parseUuid,
  queryOf,
  single,
  timeField,
} from './portal-format.js';
import { PageRefusal } from './portal-page.filter.js';
import { Action, Done, Page, PortalController, QueryValues, Session } from './portal-page.js';
import { operatorActing } from './operator-acting.js';

/** Callbacks a list page shows. */
export const PORTAL_PAGE_SIZE = 50;

/** The message codes and names, for the pages' selects. */
export const MESSAGES: [number, string][] = Object.entries(CallbackMessage)
  .filter(([, v]) => typeof v === 'number')
  .map(([name, code]) => [code as number, name]);

/** What an action's redirect says was done (a fixed set: nothing of the URL is shown as given). */
const DONE: Record<string, string> = {
  redelivered: 'Redelivery requested: it is sent again with the same webhook-id.',
};

/** A path's callback id: a malformed one is refused by name (400), as the API does. */
export function callbackIdOf(raw: string): string {
  const id = parseUuid('callbackId', raw);
  if (!id) throw new FieldError('callbackId is missing');
  return id;
}

/**
 * The delivery log: the partner's callbacks newest first, 50 a page (keyset, as the API's list),
 * filtered as the API filters them and by destination and creation time; a callback found by its
 * id; one callback's page with what comes next; and Redeliver (the API's rule).
 */
@PortalController('callbacks')
export class PortalCallbacksController {
  constructor(
    private readonly reads: CallbackReads,
    private readonly pages: CallbackPages,
    private readonly redelivery: Redelivery,
    private readonly destinations: DestinationsService,
    private readonly companies: CompaniesService,
  ) {}

  @Get()
  @Page('callbacks')
  async list(@Session() s: PortalIdentity, @QueryValues() q: Record<string, unknown>) {
    const status = parseChoice('status', single(q, 'status'), SHOWN_STATUSES);
    const message = parseMessage('message', single(q, 'message'));
    const companyId = parseUuid('companyId', single(q, 'companyId'));
    const destination = parseOrigin('destination', single(q, 'destination'));
    const from = parseTime('from', single(q, 'from'));
    const to = parseTime('to', single(q, 'to'));
    const cursor = single(q, 'cursor') || undefined;
    const filter = { status, message, companyId, destination, from, to, cursor, limit: PORTAL_PAGE_SIZE };
    const [page, destinations] = await Promise.all([
      this.reads.list(filter, { partnerId: s.partnerId }),
      this.destinations.listForPartner(s.partnerId),
    ]);
    const shown = {
      status,
      message: message?.toString(),
      companyId,
      destination,
      from: from && timeField(from),
      to: to && timeField(to),
    };
    const next =
      page.nextCursor === null ? null : `/portal/callbacks?${queryOf({ ...shown, cursor: page.nextCursor })}`;
    const items = page.items.map((c) => ({ ...callbackView(c, page.open), origin: callbackOrigin(c.url) }));
    const origins = [...new Set([...destinations.map((d) => d.origin), ...(destination ? [destination] : [])])].sort();
    return {
      title: 'Callbacks',
      nav: 'callbacks',
      items,
      filters: shown,
      origins,
      messages: MESSAGES,
      next,
      pageSize: PORTAL_PAGE_SIZE,
    };
  }

  /** A callback by its id (`webhook-id`): its page, or a page saying the partner has none of that id. */
  @Get('find')
  @Action()
  async find(@Session() s: PortalIdentity, @QueryValues() q: Record<string, unknown>): Promise<Done> {
    const raw = (single(q, 'id') ?? '').trim();
    const id = /^[0-9a-f-]{36}$/i.test(raw) ? parseUuid('id', raw) : undefined;
    const what = raw ? `No callback of yours has the id ${raw.slice(0, 80)}.` : 'Enter a callback id (its webhook-id).';
    if (!id) throw new PageRefusal(raw ? 404 : 400, 'Not found', what, '/portal/callbacks');
    await this.reads.get(id, { partnerId: s.partnerId }).catch((e: unknown) => {
      throw e instanceof DomainError && statusOf(e) === 404
        ? new PageRefusal(404, 'Not found', what, '/portal/callbacks')
        : e;
    });
    return { url: `/portal/callbacks/${id}` };
  }

  @Get(':callbackId')
  @Page('callback')
  async detail(
    @Session() s: PortalIdentity,
    @Param('callbackId') raw: string,
    @QueryValues() q: Record<string, unknown>,
  ) {
    const shown = await this.pages.detail(s.partnerId, callbackIdOf(raw));
    const company = await this.companies.get(s.partnerId, shown.c.companyId);
    const done = DONE[single(q, 'done') ?? ''];
    return { title: `Callback ${shown.c.id}`, nav: 'callbacks', ...shown, companyName: company.name, done };
  }

  @Post(':callbackId/redeliver')
  @Action()
  async redeliver(@Session() s: PortalIdentity, @Param('callbackId') raw: string): Promise<Done> {
    const id = callbackIdOf(raw);
    const actor = operatorActing(s, 'portal.callback.redeliver');
    await this.redelivery.redeliver(id, actor ? { partnerId: s.partnerId, actor } : { partnerId: s.partnerId });
    return { url: `/portal/callbacks/${id}?done=redelivered` };
  }
}
