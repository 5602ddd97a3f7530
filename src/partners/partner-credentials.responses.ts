import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { timestamp, uuid } from '../platform/index.js';

const SIGNING_SECRET = {
  example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  description: 'hmac-sha256 only: the Standard Webhooks secret, shown once',
} as const;
const SIGNING_PUBLIC_KEY = {
  example: 'whpk_PUAXw+hDiVqStwqnTRt+vJyYLM8uxJaMwM1V8Sr0Zgw=',
  description:
    'ed25519 only (in place of signingSecret): the whpk_ public key v1a signatures verify with; ' +
    'the private key is never shown',
} as const;

export class PartnerCreatedResponse {
  @ApiProperty(uuid) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'shown once' }) apiKey: string;
  @ApiPropertyOptional(SIGNING_SECRET) signingSecret?: string;
  @ApiPropertyOptional(SIGNING_PUBLIC_KEY) signingPublicKey?: string;
  @ApiProperty(timestamp) createdAt: string;
}

/** The new key of a rotation: one of the two, by the partner's scheme. */
export class SigningKeyResponse {
  @ApiPropertyOptional(SIGNING_SECRET) signingSecret?: string;
  @ApiPropertyOptional(SIGNING_PUBLIC_KEY) signingPublicKey?: string;
}

export class SignatureSchemeResponse extends SigningKeyResponse {
  @ApiProperty({
    enum: ['hmac-sha256', 'ed25519'],
    description: 'the scheme callbacks are signed with from now on (the previous key signs too for 24 h)',
  })
  signatureScheme: string;
}

export class ApiKeyRotatedResponse {
  @ApiProperty({ description: 'the new API key, shown once', example: 'fsk_…' }) apiKey: string;
  @ApiProperty({
    ...timestamp,
    description: 'until when the replaced key still works (now, for previousKeyValidHours 0)',
  })
  previousKeyExpiresAt: string;
}
