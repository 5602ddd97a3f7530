import { Access } from './access/route-access.js';
import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiProperty, ApiTags } from '@nestjs/swagger';
import { IsIn, IsString, Length, Matches } from 'class-validator';
import { Doc, ParseUuid } from '../platform/index.js';
import { OPERATOR_ROLES, OperatorRole } from './access/operator-role.js';
import { Actor, AuditAction, CurrentActor } from './actor.js';
import { OperatorsService } from './operators.service.js';

export class CreateOperatorDto {
  @ApiProperty({
    example: 'alice',
    minLength: 1,
    maxLength: 100,
    pattern: '^[^:\\x00-\\x1f\\x7f]+$',
    description: "unique for ever; no colon (it is the dashboard's Basic user name)",
  })
  @IsString()
  @Length(1, 100)
  // eslint-disable-next-line no-control-regex -- the control characters it refuses
  @Matches(/^[^:\x00-\x1f\x7f]+$/, { message: 'name must hold no colon and no control character' })
  name: string;

  @ApiProperty({ enum: OPERATOR_ROLES })
  @IsIn(OPERATOR_ROLES)
  role: OperatorRole;
}

export class OperatorResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'alice' }) name: string;
  @ApiProperty({ enum: OPERATOR_ROLES }) role: OperatorRole;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'when its token stopped working' })
  revokedAt: string | null;
}

export class OperatorCreatedResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'alice' }) name: string;
  @ApiProperty({ enum: OPERATOR_ROLES }) role: OperatorRole;
  @ApiProperty({ description: 'shown this once; stored as its hash only', example: 'fso_…' }) token: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export class OperatorListResponse {
  @ApiProperty({ type: [OperatorResponse] }) items: OperatorResponse[];
}

@ApiTags('operator: operators')
@Controller('admin/v1/operators')
export class OperatorsController {
  constructor(private readonly operators: OperatorsService) {}

  @Doc(
    'Create a named operator credential: its token is shown once',
    OperatorCreatedResponse,
    [400, 413, { 409: 'an operator of this name exists (names are never reused)' }],
    { status: 201 },
  )
  @Access.operator('admin')
  @AuditAction('operator.create')
  @Post()
  create(@CurrentActor() actor: Actor, @Body() dto: CreateOperatorDto) {
    return this.operators.create(actor, dto.name, dto.role);
  }

  @Doc('Every operator, the revoked ones too', OperatorListResponse, [])
  @Access.operator('viewer')
  @Get()
  async list() {
    return { items: await this.operators.list() };
  }

  @Doc(
    'Revoke an operator (the bootstrap operator admin too): ' +
      'its token stops working within a second, in every process, and stays refused',
    null,
    [400, 404, { 409: 'already revoked' }],
    { status: 204 },
  )
  @Access.operator('admin')
  @AuditAction('operator.revoke')
  @Delete(':operatorId')
  @HttpCode(204)
  async revoke(@CurrentActor() actor: Actor, @Param('operatorId', ParseUuid) id: string): Promise<void> {
    await this.operators.revoke(actor, id);
  }
}
