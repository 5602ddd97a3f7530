import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Injectable } from '@nestjs/common';
import type {} from '@fastify/view';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GatedRequest } from '../operators/index.js';
import { DomainError, statusOf, UnexpectedErrorAnswer } from '../platform/index.js';
import { FieldError, textWithTimes } from './portal-format.js';
import { FormTokenRefused } from './portal-forms.js';
import { PortalLayout } from './portal-layout.js';

/** A page a handler answers instead of its own: a refusal of its own making (a link that opens nothing). */
export class PageRefusal extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    message: string,
    /** Where its page leads back to, when not the page the request came from. */
    readonly back?: string,
  ) {
    super(message);
  }
}

interface Refusal {
  status: number;
  title: string;
  message: string;
  retryAfterS?: number;
  back?: string;
}

const STALE_FORM =
  'This form is out of date or did not come from the portal (its security token is missing or wrong). ' +
  'Nothing was changed: open the page again and resubmit.';

/** What was refused and how the page says it; null for anything unexpected (a 500 as the API answers it). */
function refusalOf(e: unknown): Refusal | null {
  if (e instanceof PageRefusal) return { status: e.status, title: e.title, message: e.message, back: e.back };
  if (e instanceof DomainError)
    return { status: statusOf(e), title: 'Not done', message: e.message, retryAfterS: e.retryAfterS };
  if (e instanceof FieldError) return { status: 400, title: 'Not done', message: e.message };
  if (e instanceof FormTokenRefused) return { status: 403, title: 'Not done', message: STALE_FORM };
  if (e instanceof HttpException && e.getStatus() < 500)
    return { status: e.getStatus(), title: 'Not done', message: e.message };
  return null;
}

/**
 * Where a refused request's page leads back to: the page its form was on (an action's own path
 * when a page has it, else the path above it), or for a page, itself (a detail page: its list).
 */
function backOf(req: FastifyRequest): string {
  const pattern = req.routeOptions.url ?? '/portal';
  const params = (req.params ?? {}) as Record<string, string>;
  const above = (p: string) => p.slice(0, p.lastIndexOf('/')) || '/portal';
  const isPage = req.method === 'GET' || req.method === 'HEAD';
  const target = isPage
    ? /:\w+$/.test(pattern)
      ? above(pattern)
      : pattern
    : req.server.hasRoute({ method: 'GET', url: pattern })
      ? pattern
      : above(pattern);
  return target.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
}

/**
 * The portal's refusals as pages, with their status: a rule of the API (`404`, `409`, `422`,
 * `429` with its Retry-After), a field refused by name (`400`), a form without its token (`403`);
 * in a session, with a link back to where the partner was.
 */
@Catch()
@Injectable()
export class PortalPageFilter implements ExceptionFilter {
  private readonly unexpected = new UnexpectedErrorAnswer();

  constructor(private readonly layout: PortalLayout) {}

  async catch(error: unknown, host: ArgumentsHost): Promise<void> {
    const req = host.switchToHttp().getRequest<GatedRequest>();
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const refusal = refusalOf(error);
    if (!refusal) return this.unexpected.send(error, reply);
    try {
      const back = req.portal ? { href: refusal.back ?? backOf(req), label: 'Back' } : null;
      const page = {
        ...(await this.layout.of(req)),
        title: refusal.title,
        message: textWithTimes(refusal.message),
        back,
      };
      if (refusal.retryAfterS !== undefined) reply.header('Retry-After', String(refusal.retryAfterS));
      await reply.status(refusal.status).type('text/html; charset=utf-8').view('notice', page);
    } catch (e) {
      this.unexpected.send(e, reply);
    }
  }
}
