import { Get, Post } from '@nestjs/common';
import { CompaniesService, TestCallbacks } from '../funding/index.js';
import type { PortalIdentity } from '../operators/index.js';
import { operatorActing } from './operator-acting.js';
import { CallbackPages } from './portal-callback-pages.js';
import { MESSAGES } from './portal-callbacks.controller.js';
import { FieldError, parseMessage, parseUuid, single } from './portal-format.js';
import { Action, Done, FormValues, Page, PortalController, QueryValues, Session } from './portal-page.js';

/** Companies the picker lists: the newest, or the newest whose name holds the search. */
const COMPANIES_SHOWN = 20;

/**
 * Send test callback: a company chosen from the partner's (newest first, searched by name with a
 * GET form, so it works without a script), an optional URL (else the company's), a message; the
 * test's page shows its one attempt once settled, asking again by itself until then.
 */
@PortalController('test')
export class PortalTestController {
  constructor(
    private readonly tests: TestCallbacks,
    private readonly companies: CompaniesService,
    private readonly pages: CallbackPages,
  ) {}

  @Get()
  @Page('test')
  async page(@Session() s: PortalIdentity, @QueryValues() q: Record<string, unknown>) {
    const search = (single(q, 'q') ?? '').trim().slice(0, 200);
    const sentId = parseUuid('callback', single(q, 'callback'));
    const [companies, sent] = await Promise.all([
      this.companies.listForPartner(s.partnerId, { name: search || undefined, limit: COMPANIES_SHOWN }),
      sentId ? this.pages.detail(s.partnerId, sentId) : null,
    ]);
    const chosen = parseUuid('companyId', single(q, 'companyId')) ?? sent?.c.companyId ?? companies[0]?.id ?? null;
    const listed = companies.map((c) => ({ id: c.id, name: c.name, createdAt: c.createdAt }));
    return {
      title: 'Test callback',
      nav: 'test',
      search,
      companies: listed,
      chosen,
      messages: MESSAGES,
      sent,
      refresh: sent?.refresh ?? null,
    };
  }

  @Post()
  @Action()
  async send(@Session() s: PortalIdentity, @FormValues() form: Record<string, unknown>): Promise<Done> {
    const companyId = parseUuid('Company', single(form, 'companyId'));
    if (!companyId) throw new FieldError("Choose a company: the test callback carries that company's ids");
    const message = parseMessage('message', single(form, 'message')) ?? 0;
    const url = single(form, 'url')?.trim() || undefined;
    const sent = await this.tests.send(
      s.partnerId,
      { companyId, url, message },
      operatorActing(s, 'portal.test-callback.send'),
    );
    return { url: `/portal/test?callback=${sent.id}` };
  }
}
