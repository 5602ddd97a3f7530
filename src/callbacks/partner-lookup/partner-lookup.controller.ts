import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsOptional, IsString, Length, Matches } from 'class-validator';
import { Access } from '../../operators/index.js';
import { Doc, NoQuery, PageCursor, PageLimit, ParseUuid } from '../../platform/index.js';
import { PartnerLookup } from './partner-lookup.js';
import { PartnerPageResponse, PartnerViewResponse } from './partner-view.responses.js';

export class ListPartnersQuery {
  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 200,
    example: 'acme',
    description: 'a part of the name, any case (taken literally: % and _ are characters)',
  })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  // PostgreSQL's text holds no NUL: refused here, named, rather than failing the statement.
  // eslint-disable-next-line no-control-regex -- the NUL it refuses
  @Matches(/^[^\u0000]*$/, { message: 'name must not contain NUL characters' })
  name?: string;

  @PageLimit()
  limit?: number;

  @PageCursor()
  cursor?: string;
}

/**
 * Operators look a partner up by name or id (an alert names it, a partner calls): its account and
 * its destinations, never a secret, key or token. Here, above partners/, because the destination
 * counts are the callback store's.
 */
@ApiTags('operator')
@Controller('admin/v1/partners')
export class PartnerLookupController {
  constructor(private readonly lookup: PartnerLookup) {}

  @Doc('List partners, newest first (by a part of the name); never a secret', PartnerPageResponse, [400])
  @Access.operator('viewer')
  @Get()
  list(@Query() q: ListPartnersQuery) {
    return this.lookup.page({ name: q.name, cursor: q.cursor, limit: q.limit ?? 50 });
  }

  @Doc('Show a partner: account, certificate, destinations open and in all; no secret', PartnerViewResponse, [400, 404])
  @Access.operator('viewer')
  @NoQuery()
  @Get(':partnerId')
  get(@Param('partnerId', ParseUuid) id: string) {
    return this.lookup.find(id);
  }
}
