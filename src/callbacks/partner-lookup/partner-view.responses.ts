import { ApiProperty } from '@nestjs/swagger';
import { SIGNATURE_SCHEMES } from '../../platform/index.js';
// The operators' view of a partner (GET /admin/v1/partners, …/{partnerId}) for the OpenAPI document.

export class PartnerCertificateSummary {
  @ApiProperty({ example: 'O=Acme Bank, CN=callbacks.acme-bank.example', description: "the certificate's subject" })
  subject: string;
  @ApiProperty({
    type: 'string',
    format: 'date-time',
    description: 'when it expires: https callbacks to the partner fail their TLS handshake after it',
  })
  notAfter: string;
}

export class PartnerDestinationCounts {
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'destinations whose circuit is open or half-open (GET /admin/v1/destinations?partnerId= lists them)',
  })
  open: number;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'destinations (callback origins) the partner has used' })
  total: number;
}

export class PartnerViewResponse {
  @ApiProperty({ type: 'string', format: 'uuid' }) id: string;
  @ApiProperty({ example: 'Acme Bank' }) name: string;
  @ApiProperty({ type: 'string', format: 'date-time' }) createdAt: string;
  @ApiProperty({ enum: SIGNATURE_SCHEMES, description: 'its callbacks signed by hmac-sha256 (v1) or ed25519 (v1a)' })
  signatureScheme: string;
  @ApiProperty({ type: 'string', format: 'uri', nullable: true, description: 'where its operational events go' })
  operationsUrl: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'its API key last rotated' })
  apiKeyRotatedAt: string | null;
  @ApiProperty({
    type: PartnerCertificateSummary,
    nullable: true,
    description: 'its client certificate for mutual TLS (never the key); null: none',
  })
  clientCertificate: PartnerCertificateSummary | null;
  @ApiProperty({ type: PartnerDestinationCounts }) destinations: PartnerDestinationCounts;
}

export class PartnerPageResponse {
  @ApiProperty({ type: [PartnerViewResponse] }) items: PartnerViewResponse[];
  @ApiProperty({ type: 'string', nullable: true, description: 'pass as cursor for the next (older) page; null: last' })
  nextCursor: string | null;
}
