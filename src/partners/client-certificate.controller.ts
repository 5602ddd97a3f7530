import { Body, Controller, Delete, HttpCode, Param, Put } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsString, MaxLength, MinLength } from 'class-validator';
import { Access, Actor, AuditAction, CurrentActor } from '../operators/index.js';
import { Doc, IsOmittable, ParseUuid } from '../platform/index.js';
import { ClientCertificates } from './client-certificates.service.js';
import { ClientCertificateResponse } from './partner-profile.responses.js';

/** A PEM text's bound: the body's 64 KiB bounds the three together. */
const PEM_LIMIT = 32 * 1024;

export class ClientCertificateDto {
  @ApiProperty({
    description:
      'PEM: the client certificate (the leaf) first, ' +
      'then its chain up to (not necessarily including) the root the receiver trusts',
    maxLength: PEM_LIMIT,
  })
  @IsString()
  @MinLength(1)
  @MaxLength(PEM_LIMIT)
  certificate: string;

  @ApiProperty({
    description:
      "PEM: the leaf certificate's private key, unencrypted (PKCS#8, PKCS#1 or SEC 1); sealed at rest, never returned",
    maxLength: PEM_LIMIT,
  })
  @IsString()
  @MinLength(1)
  @MaxLength(PEM_LIMIT)
  privateKey: string;

  @ApiPropertyOptional({
    description:
      "PEM bundle: verify the receiver's certificate against these CAs only; without it, against the public roots",
    maxLength: PEM_LIMIT,
  })
  @IsOmittable()
  @IsString()
  @MaxLength(PEM_LIMIT)
  serverCa?: string;
}

const REFUSED = {
  422:
    'the certificate, privateKey or serverCa is not readable PEM, the key does not match the certificate, ' +
    'a certificate of the chain has expired (or is not valid yet), ' +
    'or the certificate does not allow client authentication; the message names which',
};

@ApiTags('operator')
@Controller('admin/v1/partners/:partnerId/client-certificate')
export class ClientCertificateController {
  constructor(private readonly certificates: ClientCertificates) {}

  /** Presented on every https callback to the partner from now on; replaces the one it had. */
  @Doc(
    "Set the partner's client certificate for mutual TLS (the key is sealed, never returned)",
    ClientCertificateResponse,
    [400, 404, 413, REFUSED],
  )
  @Access.operator('admin')
  @AuditAction('partner.client-certificate.set')
  @Put()
  @HttpCode(200)
  set(@CurrentActor() actor: Actor, @Param('partnerId', ParseUuid) id: string, @Body() dto: ClientCertificateDto) {
    return this.certificates.set(actor, id, {
      certificate: dto.certificate,
      privateKey: dto.privateKey,
      serverCa: dto.serverCa,
    });
  }

  @Doc(
    "Remove the partner's client certificate: callbacks go without one",
    null,
    [400, { 404: 'unknown partner, or it has no client certificate' }],
    { status: 204 },
  )
  @Access.operator('admin')
  @AuditAction('partner.client-certificate.delete')
  @Delete()
  @HttpCode(204)
  async remove(@CurrentActor() actor: Actor, @Param('partnerId', ParseUuid) id: string): Promise<void> {
    await this.certificates.remove(actor, id);
  }
}
