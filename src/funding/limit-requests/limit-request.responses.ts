import { ApiProperty } from '@nestjs/swagger';
import { currency, money, timestamp, url, uuid } from '../../platform/index.js';

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
