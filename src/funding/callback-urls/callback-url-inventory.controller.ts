import { Body, Controller, Get, HttpCode, Post, UseInterceptors } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Access } from '../../operators/index.js';
import { Doc, IdempotencyInterceptor, NoQuery } from '../../platform/index.js';
import { CurrentPartner, Partner } from '../../partners/index.js';
import { CallbackUrlListResponse, MoveCallbackUrlDto, MovedResponse } from './callback-url-inventory.dto.js';
import { CallbackUrlList } from './callback-url-list.service.js';
import { CallbackUrlMove, URL_MOVE_LIMIT } from './callback-url-move.service.js';

const LIMIT = URL_MOVE_LIMIT.toLocaleString('en');

/**
 * A partner's callback URLs as a whole: which are in use, and moving one to another
 * (docs/partners.md, "Moving your receiver").
 */
@ApiTags('callback URLs')
@Access.partner()
@Controller('v1/callback-urls')
export class CallbackUrlInventoryController {
  constructor(
    private readonly urls: CallbackUrlList,
    private readonly moves: CallbackUrlMove,
  ) {}

  @Doc('Your callback URLs in use: resources using each, destination state, last delivery', CallbackUrlListResponse, [])
  @NoQuery()
  @Get()
  async list(@CurrentPartner() p: Partner) {
    return { items: await this.urls.list(p.id) };
  }

  /** A retry whose answer was lost would find `from` unused (404): the Idempotency-Key gives it the first answer. */
  @Doc(
    'Move every resource registered with from (any property) to to, each as its own PATCH would ' +
      '(waiting callbacks follow), in one transaction',
    MovedResponse,
    [
      { 400: 'from or to missing or malformed, to refused as a callback URL (naming to), or to equal to from' },
      { 404: 'none of your resources uses from' },
      413,
      { 422: `more than ${LIMIT} resources use from: nothing was moved (code url_move_over_limit)` },
    ],
    { idempotent: true },
  )
  @Post('move')
  @HttpCode(200)
  @UseInterceptors(IdempotencyInterceptor)
  async move(@CurrentPartner() p: Partner, @Body() dto: MoveCallbackUrlDto) {
    return { count: await this.moves.move(p.id, dto) };
  }
}
