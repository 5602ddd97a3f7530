import { Access } from '../operators/index.js';
import { APP_CONFIG, AppConfig, Doc, NoQuery } from '../platform/index.js';
import { SourceIpsResponse } from './callback.responses.js';
import { Controller, Get, Inject } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';

@ApiTags('callbacks')
@Access.anyone()
@Controller('v1/callbacks')
export class SourceIpsController {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** The addresses callbacks come from, for partners' firewall allow-lists. No authentication. */
  @Doc('Addresses callbacks are sent from (no authentication)', SourceIpsResponse, [])
  @NoQuery()
  @Get('source-ips')
  sourceIps() {
    return { variant: this.config.variant, addresses: this.config.callbackSourceIps };
  }
}
