import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { AUDIT_ACTIONS, type AuditAction } from '../../../domain/shared/audit.js';
import { PageQueryDto } from './page-query.dto.js';
import { PageDto } from './page-response.dto.js';

export class AuditQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: AUDIT_ACTIONS })
  @IsOptional()
  @IsIn(AUDIT_ACTIONS, { message: `action must be one of ${AUDIT_ACTIONS.join(', ')}` })
  action?: AuditAction;

  @ApiPropertyOptional({
    maxLength: 300,
    example: 'skill:pdf',
    description:
      'Exactly one target: `skill:<name>`, `skill:personal:<owner id>/<name>`, `user:<name>` or `group:<id>`.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(300, { message: 'target must be at most 300 characters' })
  target?: string;
}

class AuditActorDto {
  @ApiProperty({ format: 'uuid', nullable: true, type: String, description: 'null: the server itself (the CLI).' })
  id: string | null;

  @ApiProperty({ nullable: true, type: String, description: 'Kept after the user is gone.' })
  name: string | null;
}

export class AuditEntryDto {
  @ApiProperty({ example: '42' })
  id: string;

  @ApiProperty({ type: String, format: 'date-time' })
  at: string;

  @ApiProperty({ type: () => AuditActorDto })
  actor: AuditActorDto;

  @ApiProperty({ enum: AUDIT_ACTIONS })
  action: AuditAction;

  @ApiProperty({ example: 'skill:pdf' })
  target: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'What changed, by action.' })
  details: Record<string, unknown>;
}

export class AuditPageDto extends PageDto {
  @ApiProperty({ type: () => [AuditEntryDto] })
  items: AuditEntryDto[];
}
