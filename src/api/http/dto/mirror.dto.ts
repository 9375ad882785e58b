import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';

export class AddMirrorDto {
  @ApiProperty({
    description: "The mirror's name: lowercase letters, digits, `_` and `-` (1–64, a letter or digit first).",
    example: 'team-skills',
    maxLength: 64,
  })
  @IsString()
  @MaxLength(64)
  name: string;

  @ApiProperty({
    description: 'Where to import from, as `POST /v1/admin/skills/import` takes it (git, a discovery index).',
    example: 'git+https://github.com/acme/skills.git#main:skills',
    maxLength: 2048,
  })
  @IsString()
  @MaxLength(2048)
  source: string;

  @ApiPropertyOptional({
    description: 'How often to import again: `90s`, `15m`, `6h`, `1d` (1m to 7d).',
    default: '15m',
  })
  @IsOptional()
  @IsString()
  @MaxLength(40)
  interval?: string;
}

class MirrorRunSkillDto {
  @ApiProperty()
  name: string;

  @ApiProperty({ type: 'integer' })
  version: number;

  @ApiProperty()
  digest: string;

  @ApiProperty({ description: 'A new version from this run.' })
  created: boolean;

  @ApiProperty({ description: 'The skill was rolled back to this version by an admin and kept there.' })
  held: boolean;
}

class MirrorRunResultDto {
  @ApiProperty({ type: () => [MirrorRunSkillDto] })
  skills: MirrorRunSkillDto[];

  @ApiProperty({ type: [String] })
  warnings: string[];
}

export class MirrorDto {
  @ApiProperty()
  name: string;

  @ApiProperty({ enum: ['config', 'api'], description: '`config`: `[app.skills.mirrors.NAME]`; `api`: added here.' })
  origin: string;

  @ApiProperty({ description: 'From the configuration: the API cannot remove it.' })
  readOnly: boolean;

  @ApiProperty()
  source: string;

  @ApiProperty({ example: '15m' })
  interval: string;

  @ApiProperty({ type: 'integer' })
  intervalSeconds: number;

  @ApiProperty({ type: String, format: 'date-time' })
  createdAt: Date;

  @ApiProperty({ type: String, format: 'date-time', description: 'When the mirror is next due.' })
  nextRunAt: Date;

  @ApiProperty({ description: 'A run holds the mirror now (on any instance).' })
  running: boolean;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  lastRunAt: Date | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  lastSuccessAt: Date | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  lastErrorAt: Date | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Why the last failed run failed (kept after a later success: compare the times).',
  })
  lastError: string | null;

  @ApiProperty({ type: () => MirrorRunResultDto, nullable: true, description: 'What the last good run installed.' })
  lastResult: MirrorRunResultDto | null;
}
