import { Field, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import { ApiProperty } from '@nestjs/swagger';
import { ApiField } from './api-field.decorator.js';

/**
 * What `command.presenter.ts` answers: the OpenAPI schemas (the class names) and, where GraphQL
 * answers the same shape, its object types (the names given to `@ObjectType`). Documentation only.
 */

const CommandCollisionKind = { command: 'command', skill: 'skill' } as const;
registerEnumType(CommandCollisionKind, {
  name: 'CommandCollisionKind',
  description:
    '`command`: two command files of one name (the earlier directory wins); `skill`: a command named like a ' +
    'loaded skill (the command wins `/name`; the skill stays reachable as `$name` and through the tools).',
});

@ObjectType('Command', {
  description: 'A command a message runs as `/name args` (the twin of an item of GET /v1/commands).',
})
export class CommandDto {
  @ApiField({
    openapi: { description: 'Run it as `/name args`; the file name without `.md`.', example: 'review-pr' },
    graphql: { description: 'The file name without `.md`.' },
  })
  name: string;

  @ApiField()
  description: string;

  @ApiField(() => String, { nullable: true, description: 'What to type after the name, e.g. `<pr-number> [focus]`.' })
  argumentHint: string | null;

  @ApiField(() => [String], { description: '`requires-skills`: activated before the prompt runs, in this order.' })
  requiredSkills: string[];

  @ApiField(() => [String], {
    description: 'Required skills that are not loaded now; running the command reports them.',
  })
  missingSkills: string[];
}

export class CommandListDto {
  @ApiProperty({ type: 'integer', minimum: 0 })
  count: number;

  @ApiProperty({ type: () => [CommandDto], description: 'In name order.' })
  commands: CommandDto[];
}

@ObjectType('CommandLocation')
export class CommandLocationDto {
  @ApiField({ description: 'Host path: a command file, or a skill folder.' })
  path: string;

  @ApiField({ description: 'The configured commands (or skills) directory.' })
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

/*
 * GraphQL's own twins of the two above: they describe neither `path` nor `source` (REST's inherit
 * CommandLocation's descriptions), so one class would change one door's schema.
 */

@ObjectType('LoadedCommand')
class LoadedCommandModel {
  @Field()
  name: string;

  @Field()
  path: string;

  @Field()
  source: string;

  @Field(() => [String])
  warnings: string[];
}

@ObjectType('InvalidCommand')
class InvalidCommandModel {
  @Field({ description: 'The name its file gives it.' })
  name: string;

  @Field()
  path: string;

  @Field()
  source: string;

  @Field(() => [String])
  errors: string[];
}

@ObjectType('CommandCollision')
export class CommandCollisionDto {
  @ApiField()
  name: string;

  @ApiField(() => CommandCollisionKind, {
    openapi: {
      enum: ['command', 'skill'],
      description:
        '`command`: two command files of one name (the earlier directory wins); `skill`: a command named like a ' +
        'loaded skill (the command wins `/name`, the skill stays reachable as `$name` and through the tools).',
    },
  })
  kind: 'command' | 'skill';

  @ApiField(() => CommandLocationDto, { description: 'What `/name` runs.' })
  winner: CommandLocationDto;

  @ApiField(() => CommandLocationDto)
  loser: CommandLocationDto;
}

@ObjectType('CommandDirectoryReport')
export class CommandDirectoryReportDto {
  @ApiField({ description: 'As written in the configuration.' })
  configured: string;

  @ApiField({ openapi: { description: 'Resolved host path.' } })
  path: string;

  @ApiField()
  exists: boolean;

  @ApiField(() => Int, { openapi: { minimum: 0, description: 'Commands loaded from it.' } })
  commands: number;

  @ApiField(() => Int, { openapi: { minimum: 0 } })
  invalid: number;
}

/** The commands section of the admin report. */
@ObjectType('CommandScanReport', {
  description: 'The commands directories, scanned with the skills (a section of the admin report).',
})
export class CommandScanReportDto {
  @ApiField(() => [CommandDirectoryReportDto])
  directories: CommandDirectoryReportDto[];

  @ApiField(() => [LoadedCommandModel], { openapi: { type: () => [ScannedCommandDto] } })
  valid: ScannedCommandDto[];

  @ApiField(() => [InvalidCommandModel], { openapi: { type: () => [InvalidCommandDto] } })
  invalid: InvalidCommandDto[];

  @ApiField(() => [CommandCollisionDto])
  collisions: CommandCollisionDto[];

  @ApiField(() => [String])
  warnings: string[];
}
