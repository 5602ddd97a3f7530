import {
  applyDecorators,
  Controller,
  createParamDecorator,
  ExecutionContext,
  Redirect,
  Render,
  UseFilters,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { Access, type GatedRequest, type PortalIdentity } from '../operators/index.js';
import { PortalFormGuard } from './portal-forms.js';
import { LayoutInterceptor } from './portal-layout.js';
import { PortalPageFilter } from './portal-page.filter.js';

/**
 * A controller of the portal: its routes under /portal, each a page of a partner's session unless
 * it declares otherwise (`Access.portalVisitor()`), none in the OpenAPI document; every unsafe
 * request carries its session's form token (PortalFormGuard); a refusal is a page (PortalPageFilter).
 */
export const PortalController = (path = '') =>
  applyDecorators(
    Controller(path ? `portal/${path}` : 'portal'),
    ApiExcludeController(),
    Access.portalSession(),
    UseGuards(PortalFormGuard),
    UseFilters(PortalPageFilter),
  );

/** A page rendered from `template` (src/portal/views) with the layout's values. */
export const Page = (template: string) => applyDecorators(Render(template), UseInterceptors(LayoutInterceptor));

/** A form's action: answered 303 to the `url` its handler returns (the page showing the result). */
export const Action = () => Redirect('/portal', 303);

/** Where an action's answer goes. */
export type Done = { url: string };

/** The query's values as given (a repeated one is an array: `single` refuses it). */
export const QueryValues = createParamDecorator(
  (_: unknown, ctx: ExecutionContext) =>
    (ctx.switchToHttp().getRequest<FastifyRequest>().query ?? {}) as Record<string, unknown>,
);

/** A form POST's fields as given (portal-http.ts parses them). */
export const FormValues = createParamDecorator(
  (_: unknown, ctx: ExecutionContext) =>
    (ctx.switchToHttp().getRequest<FastifyRequest>().body ?? {}) as Record<string, unknown>,
);

/** The session the access gate let through (a route of `portal-session` access has one). */
export const Session = createParamDecorator((_: unknown, ctx: ExecutionContext): PortalIdentity => {
  const session = ctx.switchToHttp().getRequest<GatedRequest>().portal;
  if (!session) throw new Error('a portal page asked for a session its route does not have');
  return session;
});
