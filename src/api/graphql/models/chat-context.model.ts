import { Field, Int, ObjectType } from '@nestjs/graphql';
import { GraphQLJSON } from '../scalars/json.scalar.js';

@ObjectType('ToolDefinition')
export class ToolDefinitionModel {
  @Field({ description: 'Canonical name, such as `skills.activate`.' })
  name: string;

  @Field({ description: 'The name model APIs see, such as `skills_activate`.' })
  wireName: string;

  @Field()
  description: string;

  @Field(() => GraphQLJSON, { description: 'JSON Schema of the arguments.' })
  inputSchema: unknown;
}

@ObjectType('ContextCatalogue', { description: 'The catalogue in the system prompt: whole, or a ranked subset within the budget.' })
export class ContextCatalogueModel {
  @Field({ description: 'Every skill the chat may use is listed (in name order, the same bytes every turn).' })
  complete: boolean;

  @Field(() => [String], { description: 'The listed skills, in the order shown.' })
  listed: string[];

  @Field(() => Int, { description: 'Skills the chat may use that are not listed.' })
  unlisted: number;

  @Field(() => Int, { description: 'Size in o200k tokens, as the budget counts it.' })
  tokens: number;

  @Field(() => Int)
  budgetTokens: number;

  @Field(() => Int)
  maxSkills: number;
}

@ObjectType('ContextCommand', { description: 'A command the system prompt lists.' })
export class ContextCommandModel {
  @Field()
  name: string;

  @Field()
  description: string;

  @Field(() => String, { nullable: true })
  argumentHint: string | null;

  @Field(() => [String])
  requiredSkills: string[];
}

@ObjectType('ActivatedVersion', { description: 'An activated skill: the version the chat reads, the one loaded now, and whether activating it again moves the chat to a newer one.' })
export class ActivatedVersionModel {
  @Field()
  name: string;

  @Field(() => String, { nullable: true, description: 'The version the chat activated and reads (`sha256:…`).' })
  version: string | null;

  @Field(() => String, { nullable: true, description: 'The version loaded now; null when the skill is gone or has none.' })
  currentVersion: string | null;

  @Field({ description: '`current`, `newer-available`, `disabled`, `filtered-out` or `gone`.' })
  status: string;
}

@ObjectType('SkillFilter', { description: 'Names or `prefix-*` patterns; an absent list does not narrow.' })
export class SkillFilterModel {
  @Field(() => [String], { nullable: true })
  include?: string[];

  @Field(() => [String], { nullable: true })
  exclude?: string[];
}

@ObjectType('ContextSkills', { description: "The catalogue this chat's prompts get: the user's personal skills included, narrowed by the user's and the chat's filters." })
export class ContextSkillsModel {
  @Field(() => [String])
  offered: string[];

  @Field(() => [String])
  filteredOut: string[];

  @Field(() => SkillFilterModel, { nullable: true })
  userFilter: SkillFilterModel | null;

  @Field(() => SkillFilterModel, { nullable: true })
  chatFilter: SkillFilterModel | null;
}

@ObjectType('ChatContext', { description: 'Exactly what the model would get next in a chat (the twin of GET /v1/chats/{id}/context).' })
export class ChatContextModel {
  @Field(() => String, { nullable: true })
  model: string | null;

  @Field()
  systemPrompt: string;

  @Field(() => ContextCatalogueModel, { nullable: true, description: 'The catalogue in the system prompt; null with skills off.' })
  catalogue: ContextCatalogueModel | null;

  @Field(() => [ToolDefinitionModel], { description: 'The tools of the configured style, exactly as the model is sent them; empty when they are not offered.' })
  tools: ToolDefinitionModel[];

  @Field(() => [String], { description: 'Names of the skills the chat has activated.' })
  activatedSkills: string[];

  @Field(() => [ActivatedVersionModel])
  activatedVersions: ActivatedVersionModel[];

  @Field(() => ContextSkillsModel)
  skills: ContextSkillsModel;

  @Field(() => [ContextCommandModel], { description: 'The commands the system prompt lists.' })
  commands: ContextCommandModel[];
}
