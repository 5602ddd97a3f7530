import { Get, HttpCode, Param, Post, Type } from '@nestjs/common';
import { Access } from '../../operators/index.js';
import { CurrentPartner, Partner } from '../../partners/index.js';
import { Doc, ParseUuid } from '../../platform/index.js';

/** What the partner's read and cancel routes call: the service of one kind of company request. */
export interface PartnerRequests<R> {
  get(partnerId: string, companyId: string, id: string): Promise<R>;
  cancel(partnerId: string, companyId: string, id: string): Promise<R>;
}

/** What the routes of one kind of company request say of it: the rest is one shape. */
export interface CompanyRequestRoutesSpec<R> {
  /** The path parameter naming one request: `limitRequestId`. */
  idParam: string;
  /** The request in the read routes' summaries: `limit request` → "Read a limit request" and "… status". */
  what: string;
  /** The cancel route's summary. */
  cancelSummary: string;
  /** The OpenAPI types of the two views. */
  response: Type<unknown>;
  statusResponse: Type<unknown>;
  view(request: R): object;
  statusView(request: R): object;
}

/**
 * The partner's routes every kind of company request has, under the controller's collection path
 * (`v1/companies/:companyId/…`): read one, read its status, cancel it. A controller extends the
 * class this returns and adds its own routes (the create, whose body differs); each route here is
 * declared with its decorators on that class, so the route table and the OpenAPI document list
 * it as any route written out.
 */
export function CompanyRequestRoutes<R>(spec: CompanyRequestRoutesSpec<R>) {
  const one = `:${spec.idParam}`;

  abstract class Routes {
    constructor(private readonly requests: PartnerRequests<R>) {}

    @Access.partner()
    @Doc(`Read a ${spec.what}`, spec.response, [400, 404])
    @Get(one)
    async get(
      @CurrentPartner() p: Partner,
      @Param('companyId', ParseUuid) companyId: string,
      @Param(spec.idParam, ParseUuid) id: string,
    ) {
      return spec.view(await this.requests.get(p.id, companyId, id));
    }

    @Access.partner()
    @Doc(`Read a ${spec.what} status`, spec.statusResponse, [400, 404])
    @Get(`${one}/status`)
    async status(
      @CurrentPartner() p: Partner,
      @Param('companyId', ParseUuid) companyId: string,
      @Param(spec.idParam, ParseUuid) id: string,
    ) {
      return spec.statusView(await this.requests.get(p.id, companyId, id));
    }

    @Access.partner()
    @Doc(spec.cancelSummary, spec.response, [400, 404, 409, 413])
    @Post(`${one}/cancel`)
    @HttpCode(200)
    async cancel(
      @CurrentPartner() p: Partner,
      @Param('companyId', ParseUuid) companyId: string,
      @Param(spec.idParam, ParseUuid) id: string,
    ) {
      return spec.view(await this.requests.cancel(p.id, companyId, id));
    }
  }
  return Routes;
}
