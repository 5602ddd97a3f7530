import { ApiProperty } from '@nestjs/swagger';
import { uuid, timestamp } from '../openapi/schema.js';

export class PartnerCreatedResponse {
  @ApiProperty(uuid) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'shown once' }) apiKey: string;
  @ApiProperty({ example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', description: 'Standard Webhooks secret, shown once' }) signingSecret: string;
  @ApiProperty(timestamp) createdAt: string;
}

export class SigningSecretResponse {
  @ApiProperty({ example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }) signingSecret: string;
}

export class ApiKeyRotatedResponse {
  @ApiProperty({ description: 'the new API key, shown once', example: 'fsk_…' }) apiKey: string;
  @ApiProperty({ ...timestamp, description: 'until when the replaced key still works (now, for previousKeyValidHours 0)' }) previousKeyExpiresAt: string;
}
