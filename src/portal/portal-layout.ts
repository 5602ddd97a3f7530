import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { from, Observable, switchMap } from 'rxjs';
import type { GatedRequest } from '../operators/index.js';
import { PartnerProfile } from '../partners/index.js';
import { breakable, textWithTimes, timeLabel } from './portal-format.js';
import { PortalForms } from './portal-forms.js';

/** Where the portal's pages link for help: the guide and the partners' API the service serves. */
export const DOCS_LINKS = { guide: '/docs/partners', api: '/docs/partners/api' } as const;

/** What every template may call: one time format, ids and URLs that break at separators, errors' times formatted. */
export const HELPERS = { time: timeLabel, wrap: breakable, text: textWithTimes, docs: DOCS_LINKS };

/** What the layout shows around a page: whose portal (none without a session), the navigation, the form token. */
export interface Layout {
  partnerName: string | null;
  nav: string | null;
  csrf: string | null;
}

/** The layout's values for a request: a session's partner and form token, or none on the sign-in pages. */
@Injectable()
export class PortalLayout {
  constructor(
    private readonly profile: PartnerProfile,
    private readonly forms: PortalForms,
  ) {}

  async of(req: FastifyRequest): Promise<Layout & typeof HELPERS> {
    const session = (req as GatedRequest).portal;
    if (!session) return { ...HELPERS, partnerName: null, nav: null, csrf: null };
    const { name } = await this.profile.view(session.partnerId);
    return { ...HELPERS, partnerName: name, nav: 'none', csrf: this.forms.tokenFor(session) };
  }
}

/** Puts the layout's values under a page's own (a page's `nav` names its tab). */
@Injectable()
export class LayoutInterceptor implements NestInterceptor {
  constructor(private readonly layout: PortalLayout) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = ctx.switchToHttp().getRequest<FastifyRequest>();
    return next
      .handle()
      .pipe(switchMap((page: Record<string, unknown>) => from(this.layout.of(req).then((l) => ({ ...l, ...page })))));
  }
}
