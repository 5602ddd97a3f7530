import { Get, Post } from '@nestjs/common';
import { CallbackUrlValidator } from '../egress/index.js';
import { CallbackUrlList, CallbackUrlMove } from '../funding/index.js';
import type { PortalIdentity } from '../operators/index.js';
import { operatorActing } from './operator-acting.js';
import { FieldError, single } from './portal-format.js';
import { PageRefusal } from './portal-page.filter.js';
import { Action, Done, FormValues, Page, PortalController, QueryValues, Session } from './portal-page.js';

/** A move's two URLs as its form gives them: both required. */
function moveOf(values: Record<string, unknown>): { from: string; to: string } {
  const from = single(values, 'from')?.trim();
  const to = single(values, 'to')?.trim();
  if (!from || !to) throw new FieldError('From and To are both required');
  return { from, to };
}

/**
 * The partner's callback URLs in use: how many resources use each, its destination's state and its
 * last delivery (GET /v1/callback-urls); and Change URL, which shows how many resources use From
 * first (`?from=&to=`, To checked as at creation) and then moves them all (the API's URL move:
 * each as its own PATCH would, pending callbacks following).
 */
@PortalController('urls')
export class PortalUrlsController {
  constructor(
    private readonly list: CallbackUrlList,
    private readonly mover: CallbackUrlMove,
    private readonly urls: CallbackUrlValidator,
  ) {}

  @Get()
  @Page('urls')
  async page(@Session() s: PortalIdentity, @QueryValues() q: Record<string, unknown>) {
    const items = await this.list.list(s.partnerId);
    const moved = single(q, 'moved');
    const done = moved !== undefined && /^\d{1,6}$/.test(moved) ? Number(moved) : null;
    const base = { title: 'Callback URLs', nav: 'urls', items, done, confirm: null };
    if (single(q, 'from') === undefined && single(q, 'to') === undefined) return base;
    const { from, to } = moveOf(q);
    const using = items.find((u) => u.url === from);
    if (!using) throw new PageRefusal(404, 'Not done', 'No resource of yours uses that URL as From.');
    const checked = (await this.urls.check('to', to))!;
    if (checked === from) throw new FieldError('To is the URL given as From: nothing would move');
    return { ...base, confirm: { from, to: checked, resources: using.resources } };
  }

  @Post('move')
  @Action()
  async move(@Session() s: PortalIdentity, @FormValues() form: Record<string, unknown>): Promise<Done> {
    const count = await this.mover.move(s.partnerId, moveOf(form), operatorActing(s, 'portal.callback-urls.move'));
    return { url: `/portal/urls?moved=${count}` };
  }
}
