import { ApiProperty } from '@nestjs/swagger';
import { SIGNATURE_SCHEMES } from '../platform/index.js';
// The partner's own view (GET /v1/partner) for the OpenAPI document; partner-profile.ts builds it.

export class ClientCertificateResponse {
  @ApiProperty({
    example: 'C=DE, O=Acme Bank, CN=callbacks.acme-bank.example',
    description: "the certificate's subject, its attributes as the certificate lists them",
  })
  subject: string;
  @ApiProperty({ example: 'C=DE, O=Acme Bank, CN=Acme Bank Partner CA', description: "the certificate's issuer" })
  issuer: string;
  @ApiProperty({
    type: 'string',
    format: 'date-time',
    description: 'when it expires (ISO-8601, UTC): callbacks fail their TLS handshake after it',
  })
  notAfter: string;
  @ApiProperty({
    pattern: '^([0-9A-F]{2}:){31}[0-9A-F]{2}$',
    description:
      "SHA-256 of the certificate's DER, colon-separated hex (as openssl x509 -fingerprint -sha256 prints it)",
  })
  fingerprint256: string;
}

export class PartnerResponse {
  @ApiProperty({ type: 'string', format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({
    enum: SIGNATURE_SCHEMES,
    description: 'hmac-sha256: callbacks carry v1 signatures (your whsec_ secret); ed25519: v1a (the whpk_ keys below)',
  })
  signatureScheme: string;
  @ApiProperty({
    type: [String],
    example: ['whpk_PUAXw+hDiVqStwqnTRt+vJyYLM8uxJaMwM1V8Sr0Zgw='],
    description:
      'the whpk_ public keys callbacks are signed with now: the current key first, ' +
      'and the replaced one during the 24 h after a rotation or switch; [] under hmac-sha256',
  })
  signingPublicKeys: string[];
  @ApiProperty({
    type: 'string',
    format: 'uri',
    nullable: true,
    description: 'where operational events go; null: none are sent',
  })
  operationsUrl: string | null;
  @ApiProperty({
    type: ClientCertificateResponse,
    nullable: true,
    description: 'the client certificate presented on every https callback to you (set by an operator); null: none',
  })
  clientCertificate: ClientCertificateResponse | null;
}
