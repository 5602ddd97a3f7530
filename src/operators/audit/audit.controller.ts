import { Access } from '../access/route-access.js';
import { Controller, Get, Query } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsIn, IsISO8601, IsOptional, IsString, IsUUID, MaxLength, MinLength } from 'class-validator';
import { Doc, PageCursor, PageLimit } from '../../platform/index.js';

import { AUDIT_ACTIONS, AUDIT_TARGET_TYPES } from './audit-actions.js';
import { AuditLog } from './audit-log.js';

export class ListAuditQuery {
  @ApiPropertyOptional({ format: 'uuid', description: "only this operator's changes" })
  @IsOptional()
  @IsUUID()
  operatorId?: string;

  @ApiPropertyOptional({ enum: AUDIT_TARGET_TYPES })
  @IsOptional()
  @IsIn(AUDIT_TARGET_TYPES)
  targetType?: string;

  @ApiPropertyOptional({
    description: "the changed resource's id (a destination's origin)",
    minLength: 1,
    maxLength: 2048,
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(2048)
  targetId?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'only entries at or after this time' })
  @IsOptional()
  @IsISO8601({ strict: true })
  since?: string;

  @PageLimit()
  limit?: number;

  @PageCursor()
  cursor?: string;
}

export class AuditOperatorResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'alice' }) name: string;
}

export class AuditPartnerResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'Acme Bank', description: "the partner's name when it made the change" }) name: string;
}

/**
 * The target's properties, and those of other rows the change touched by their name (`company`: an
 * object of its own).
 */
const TRACKED = {
  type: 'object' as const,
  additionalProperties: { type: ['string', 'number', 'boolean', 'null', 'object'] },
};

export class AuditEntryResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'date-time' }) at: string;
  @ApiProperty({
    type: AuditOperatorResponse,
    nullable: true,
    description: 'the operator who made the change; null when a partner did',
  })
  operator: AuditOperatorResponse | null;
  @ApiProperty({
    type: AuditPartnerResponse,
    nullable: true,
    description:
      'the partner who made the change (rolling its own signing key through /v1/partner); null when an operator did',
  })
  partner: AuditPartnerResponse | null;
  @ApiProperty({
    enum: Object.keys(AUDIT_ACTIONS),
    description: 'a stable dotted name; docs/operations.md lists each with its route',
  })
  action: string;
  @ApiProperty({ enum: AUDIT_TARGET_TYPES }) targetType: string;
  @ApiProperty({
    type: 'string',
    nullable: true,
    description: "the changed resource's id (a destination's origin); null for a bulk change",
  })
  targetId: string | null;
  @ApiProperty({
    ...TRACKED,
    description: 'the tracked properties that changed, as they were (never a secret, token or API key)',
  })
  before: Record<string, unknown>;
  @ApiProperty({ ...TRACKED, description: 'the same properties as they became' }) after: Record<string, unknown>;
}

export class AuditPageResponse {
  @ApiProperty({ type: [AuditEntryResponse] }) items: AuditEntryResponse[];
  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'pass as cursor for the next (older) page; null on the last',
  })
  nextCursor: string | null;
}

@ApiTags('operator: audit')
@Controller('admin/v1/audit')
export class AuditController {
  constructor(private readonly audit: AuditLog) {}

  /** Read-only: no route changes or deletes an entry. */
  @Doc(
    'The audit log: one entry per change made under /admin or by a partner to its signing key, newest first',
    AuditPageResponse,
    [400],
  )
  @Access.operator('viewer')
  @Get()
  list(@Query() q: ListAuditQuery) {
    return this.audit.list({ ...q, since: q.since ? new Date(q.since) : undefined, limit: q.limit ?? 50 });
  }
}
