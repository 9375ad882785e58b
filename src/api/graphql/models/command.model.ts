import { Field, Int, ObjectType, registerEnumType } from '@nestjs/graphql';

@ObjectType('Command', { description: 'A command a message runs as `/name args` (the twin of an item of GET /v1/commands).' })
export class CommandModel {
  @Field({ description: 'The file name without `.md`.' })
  name: string;

  @Field()
  description: string;

  @Field(() => String, { nullable: true, description: 'What to type after the name, e.g. `<pr-number> [focus]`.' })
  argumentHint: string | null;

  @Field(() => [String], { description: '`requires-skills`: activated before the prompt runs, in this order.' })
  requiredSkills: string[];

  @Field(() => [String], { description: 'Required skills that are not loaded now; running the command reports them.' })
  missingSkills: string[];
}

export const CommandCollisionKind = { command: 'command', skill: 'skill' } as const;
registerEnumType(CommandCollisionKind, {
  name: 'CommandCollisionKind',
  description: '`command`: two command files of one name (the earlier directory wins); `skill`: a command named like a loaded skill (the command wins `/name`; the skill stays reachable as `$name` and through the tools).',
});

@ObjectType('CommandDirectoryReport')
export class CommandDirectoryReportModel {
  @Field({ description: 'As written in the configuration.' })
  configured: string;

  @Field()
  path: string;

  @Field()
  exists: boolean;

  @Field(() => Int)
  commands: number;

  @Field(() => Int)
  invalid: number;
}

@ObjectType('LoadedCommand')
export class LoadedCommandModel {
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
export class InvalidCommandModel {
  @Field({ description: 'The name its file gives it.' })
  name: string;

  @Field()
  path: string;

  @Field()
  source: string;

  @Field(() => [String])
  errors: string[];
}

@ObjectType('CommandLocation')
export class CommandLocationModel {
  @Field({ description: 'Host path: a command file, or a skill folder.' })
  path: string;

  @Field({ description: 'The configured commands (or skills) directory.' })
  source: string;
}

@ObjectType('CommandCollision')
export class CommandCollisionModel {
  @Field()
  name: string;

  @Field(() => CommandCollisionKind)
  kind: string;

  @Field(() => CommandLocationModel, { description: 'What `/name` runs.' })
  winner: CommandLocationModel;

  @Field(() => CommandLocationModel)
  loser: CommandLocationModel;
}

@ObjectType('CommandScanReport', { description: 'The commands directories, scanned with the skills (a section of the admin report).' })
export class CommandScanReportModel {
  @Field(() => [CommandDirectoryReportModel])
  directories: CommandDirectoryReportModel[];

  @Field(() => [LoadedCommandModel])
  valid: LoadedCommandModel[];

  @Field(() => [InvalidCommandModel])
  invalid: InvalidCommandModel[];

  @Field(() => [CommandCollisionModel])
  collisions: CommandCollisionModel[];

  @Field(() => [String])
  warnings: string[];
}
