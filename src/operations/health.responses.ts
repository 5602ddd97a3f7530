import { ApiProperty } from '@nestjs/swagger';

export class HealthResponse {
  @ApiProperty({ enum: ['ok'] }) status: string;
}

export class ReadinessResponse {
  @ApiProperty({ enum: ['ok', 'unavailable'] }) status: string;
  @ApiProperty({ enum: ['ok', 'unreachable'] }) database: string;
  @ApiProperty({ enum: ['ok', 'unreachable'] }) redis: string;
}
