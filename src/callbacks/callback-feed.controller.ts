import { Access } from '../operators/index.js';
import { Controller, Get, Query } from '@nestjs/common';
import { ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { Doc, QueryInt } from '../platform/index.js';
import { CallbackFeedPageResponse } from './callback.responses.js';
import { CurrentPartner, Partner } from '../partners/index.js';
import { callbackView } from './callback.views.js';
import { CallbackFeed } from './callback-feed.service.js';

export class FeedQuery {
  @ApiPropertyOptional({
    description: "a position the feed returned (an item's or a next); omitted: from the beginning of what is retained",
    pattern: '^[0-9]{1,40}$',
    maxLength: 40,
  })
  @IsOptional()
  @IsString()
  @MaxLength(40)
  after?: string;

  @ApiPropertyOptional({ type: 'integer', default: 100, minimum: 1, maximum: 1000 })
  @IsOptional()
  @QueryInt()
  @IsInt()
  @Min(1)
  @Max(1000)
  limit?: number;
}

/**
 * The partner's reconciliation feed. A fixed path under /v1/callbacks: registered before
 * CallbacksController, whose `:callbackId` would take "feed" for a malformed id.
 */
@ApiTags('callbacks')
@Access.partner()
@Controller('v1/callbacks')
export class CallbackFeedController {
  constructor(private readonly feed: CallbackFeed) {}

  @Doc(
    'The callback feed: every callback of yours (test callbacks excepted) exactly once, in ascending position ' +
      '(positions follow the transactions that recorded them, not their commit times), ' +
      'resuming after the position you pass (docs/partners.md, "Reconciling")',
    CallbackFeedPageResponse,
    [{ 400: 'limit not an integer from 1 to 1000, or after not a position the feed returned' }],
  )
  @Get('feed')
  async page(@CurrentPartner() partner: Partner, @Query() q: FeedQuery) {
    const page = await this.feed.page(partner.id, q.after, q.limit ?? 100);
    const items = page.items.map((i) => ({ ...callbackView(i.callback, page.open), position: i.position }));
    return { items, next: page.next };
  }
}
