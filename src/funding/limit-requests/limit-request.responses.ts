import { ApiProperty } from '@nestjs/swagger';
import { uuid, timestamp, money, currency, url } from '../../platform/openapi/schema.js';

export class LimitRequestResponse {
  @ApiProperty(uuid) id: string;
  @ApiProperty(uuid) companyId: string;
  @ApiProperty(money('10000.00')) amount: string;
  @ApiProperty(currency) currency: string;
  @ApiProperty({ enum: ['pending', 'approved', 'rejected', 'canceled'] }) status: string;
  @ApiProperty(url('receives LimitRequestStatusChanged (3)')) status_callback: string | null;
  @ApiProperty(timestamp) createdAt: string;
  @ApiProperty(timestamp) updatedAt: string;
}

export class LimitRequestStatusResponse {
  @ApiProperty(uuid) limitRequestId: string;
  @ApiProperty({ enum: ['pending', 'approved', 'rejected', 'canceled'] }) status: string;
  @ApiProperty(timestamp) updatedAt: string;
}
