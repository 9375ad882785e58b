import { ApiProperty } from '@nestjs/swagger';

/** OpenAPI schemas of what `command.presenter.ts` answers; documentation only. */

export class CommandDto {
  @ApiProperty({ description: 'Run it as `/name args`; the file name without `.md`.', example: 'review-pr' })
  name: string;

  @ApiProperty()
  description: string;

  @ApiProperty({ type: String, nullable: true, description: 'What to type after the name, e.g. `<pr-number> [focus]`.' })
  argumentHint: string | null;

  @ApiProperty({ type: [String], description: '`requires-skills`: activated before the prompt runs, in this order.' })
  requiredSkills: string[];

  @ApiProperty({ type: [String], description: 'Required skills that are not loaded now; running the command reports them.' })
  missingSkills: string[];
}

export class CommandListDto {
  @ApiProperty({ type: 'integer', minimum: 0 })
  count: number;

  @ApiProperty({ type: () => [CommandDto], description: 'In name order.' })
  commands: CommandDto[];
}

export class CommandLocationDto {
  @ApiProperty({ description: 'Host path: a command file, or a skill folder.' })
  path: string;

  @ApiProperty({ description: 'The configured commands (or skills) directory.' })
  source: string;
}

export class ScannedCommandDto extends CommandLocationDto {
  @ApiProperty()
  name: string;

  @ApiProperty({ type: [String] })
  warnings: string[];
}

export class InvalidCommandDto extends CommandLocationDto {
  @ApiProperty({ description: 'The name its file gives it.' })
  name: string;

  @ApiProperty({ type: [String], description: 'Every reason it did not load.' })
  errors: string[];
}

export class CommandCollisionDto {
  @ApiProperty()
  name: string;

  @ApiProperty({ enum: ['command', 'skill'], description: '`command`: two command files of one name (the earlier directory wins); `skill`: a command named like a loaded skill (the command wins `/name`, the skill stays reachable as `$name` and through the tools).' })
  kind: 'command' | 'skill';

  @ApiProperty({ type: () => CommandLocationDto, description: 'What `/name` runs.' })
  winner: CommandLocationDto;

  @ApiProperty({ type: () => CommandLocationDto })
  loser: CommandLocationDto;
}

export class CommandDirectoryReportDto {
  @ApiProperty({ description: 'As written in the configuration.' })
  configured: string;

  @ApiProperty({ description: 'Resolved host path.' })
  path: string;

  @ApiProperty()
  exists: boolean;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Commands loaded from it.' })
  commands: number;

  @ApiProperty({ type: 'integer', minimum: 0 })
  invalid: number;
}

/** The commands section of the admin report. */
export class CommandScanReportDto {
  @ApiProperty({ type: () => [CommandDirectoryReportDto] })
  directories: CommandDirectoryReportDto[];

  @ApiProperty({ type: () => [ScannedCommandDto] })
  valid: ScannedCommandDto[];

  @ApiProperty({ type: () => [InvalidCommandDto] })
  invalid: InvalidCommandDto[];

  @ApiProperty({ type: () => [CommandCollisionDto] })
  collisions: CommandCollisionDto[];

  @ApiProperty({ type: [String] })
  warnings: string[];
}
