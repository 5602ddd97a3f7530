import { Access } from '../../operators/index.js';
import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsInt, IsString, IsUUID, Max, Min } from 'class-validator';
import { CALLBACK_URL, Doc, IsOmittable } from '../../platform/index.js';
import { CallbackMessageResponse, callbackView } from '../../callbacks/index.js';
import { CurrentPartner, Partner } from '../../partners/index.js';
import { TEST_CALLBACKS_PER_MINUTE } from '../../delivery/index.js';
import { TestCallbacks } from './test-callbacks.service.js';

export class TestCallbackDto {
  @ApiProperty({ format: 'uuid', description: 'one of your companies: the body carries its ids' })
  @IsUUID()
  companyId: string;

  @ApiPropertyOptional({
    ...CALLBACK_URL,
    description:
      "where to send it (checked as a callback URL); omitted: the URL the company's resources use for the message",
  })
  @IsOmittable()
  @IsString()
  url?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: 4,
    default: 0,
    description: 'the message code whose body to send',
  })
  @IsOmittable()
  @IsInt()
  @Min(0)
  @Max(4)
  message?: number;
}

/** A fixed path under /v1/callbacks: registered before CallbacksController. */
@ApiTags('callbacks')
@Access.partner()
@Controller('v1/callbacks')
export class TestCallbacksController {
  constructor(private readonly tests: TestCallbacks) {}

  @Doc(
    'Send a test callback: one signed attempt at once, like any callback ("test": true); ' +
      "failed at once, unsent, while its destination's circuit is open. " +
      `At most ${TEST_CALLBACKS_PER_MINUTE} a minute`,
    CallbackMessageResponse,
    [
      400,
      404,
      413,
      {
        422: 'no url given and none registered for the message',
        429:
          `more than ${TEST_CALLBACKS_PER_MINUTE} test callbacks in a minute, or the partner rate limit; ` +
          'retry after Retry-After seconds',
      },
    ],
    { status: 202 },
  )
  @Post('test')
  @HttpCode(202)
  async send(@CurrentPartner() partner: Partner, @Body() dto: TestCallbackDto) {
    return callbackView(await this.tests.send(partner.id, dto));
  }
}
