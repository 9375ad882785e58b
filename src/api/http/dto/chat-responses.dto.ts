import { Float, ID, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PageDto } from './page-response.dto.js';
import { CHAT_TITLE_DESCRIPTION } from '../../../domain/chats/chat-title.js';
import { ApiField } from './api-field.decorator.js';
import { GraphQLDateTime } from '../../graphql/scalars/date-time.scalar.js';
import { GraphQLJSON } from '../../graphql/scalars/json.scalar.js';

/**
 * What `chat.presenter.ts` answers, to REST and GraphQL alike: the OpenAPI schemas (the class names)
 * and, where GraphQL answers the same shape, its object types (the names given to `@ObjectType`).
 * Documentation only: nothing is built from them.
 */

const ActivationHow = { explicit: 'explicit', tool: 'tool', fallback: 'fallback' } as const;
registerEnumType(ActivationHow, { name: 'ActivationHow', description: 'How a skill was first activated in a chat.' });

const MessageRole = { user: 'user', assistant: 'assistant', tool: 'tool' } as const;
registerEnumType(MessageRole, {
  name: 'MessageRole',
  description: '`tool` messages hold tool calls made through the external-loop API.',
});

const ToolCardStatus = { ok: 'ok', error: 'error' } as const;
registerEnumType(ToolCardStatus, { name: 'ToolCardStatus' });

/** A chat; GraphQL resolves its `activatedSkills` and `messages` (batched) only when asked for. */
@ObjectType('Chat')
export class ChatDto {
  @ApiField(() => ID, { openapi: { format: 'uuid' } })
  id: string;

  @ApiField(() => String, { nullable: true, description: CHAT_TITLE_DESCRIPTION })
  title: string | null;

  @ApiField(() => GraphQLDateTime, { openapi: { type: String, format: 'date-time' } })
  createdAt: string;

  @ApiField(() => GraphQLDateTime, {
    openapi: { type: String, format: 'date-time', description: 'Bumped by every stored turn or tool run.' },
  })
  updatedAt: string;
}

export class ChatOwnerDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty()
  name: string;
}

export class OwnedChatDto extends ChatDto {
  @ApiProperty({ type: () => ChatOwnerDto })
  owner: ChatOwnerDto;
}

@ObjectType('ActivatedSkill', { description: 'A skill a chat has activated.' })
export class ActivatedSkillDto {
  @ApiField({ openapi: { description: 'The skill name.' } })
  name: string;

  @ApiField(() => ActivationHow, {
    openapi: {
      enum: ['explicit', 'tool', 'fallback', 'command'],
      description:
        'How the skill was first activated in this chat: invoked by the user with tools (`explicit`) or without ' +
        '(`fallback`), by the model (`tool`), or by a command the user ran (`command`).',
    },
  })
  how: 'explicit' | 'tool' | 'fallback' | 'command';

  @ApiField(() => GraphQLDateTime, { openapi: { type: String, format: 'date-time' } })
  firstActivatedAt: string;

  @ApiField(() => GraphQLDateTime, { openapi: { type: String, format: 'date-time' } })
  lastActivatedAt: string;

  @ApiField(() => Int, { openapi: { minimum: 1 } })
  count: number;

  @ApiField(() => String, {
    nullable: true,
    openapi: {
      description:
        'The version last activated (`sha256:…`), which the chat reads until it activates the skill again; null ' +
        'for skills without versions (programmatic, or past `max_install_bytes`).',
    },
    graphql: {
      description: 'The version last activated (`sha256:…`), which the chat reads until it activates the skill again.',
    },
  })
  version: string | null;
}

export class ChatDetailDto extends ChatDto {
  @ApiProperty({ type: () => [ActivatedSkillDto] })
  activatedSkills: ActivatedSkillDto[];
}

export class ToolCardSummaryDto {
  @ApiProperty({ type: String, nullable: true, description: 'The skill the call named, when it named one.' })
  skill: string | null;

  @ApiPropertyOptional({ description: 'For `skills.readResource`: the path read.' })
  path?: string;

  @ApiPropertyOptional({ description: 'For `skills.listResources`: the type listed, when one was asked for.' })
  type?: string;

  @ApiPropertyOptional({ type: 'integer', description: 'For `skills.listResources`: how many files were listed.' })
  count?: number;

  @ApiPropertyOptional({
    type: [String],
    description: 'For `use_skill` without a good enough match: the closest skills.',
  })
  candidates?: string[];

  @ApiPropertyOptional({ description: 'For an activation in a chat: the version activated (`sha256:…`).' })
  version?: string;

  @ApiPropertyOptional({
    description:
      'For an activation in a chat whose version could not be pinned (the skill is past `max_install_bytes`): ' +
      'why; after a change on disk the chat reads the new files.',
  })
  versionWarning?: string;

  @ApiProperty()
  truncated: boolean;
}

/** One tool call as the user sees it; the summary never repeats the body, `output` is what the model read. */
@ObjectType('ToolCard', { description: 'The user-visible record of one tool call.' })
export class ToolCardDto {
  @ApiField(() => ID)
  id: string;

  @ApiField({
    openapi: {
      example: 'skills.activate',
      description:
        'The canonical tool name (`skills.activate`, `skills.readResource`, `skills.listResources`, ' +
        '`activate_skill`, `load_skill`, `use_skill`), or what a model asked for that does not exist.',
    },
    graphql: { description: 'The canonical tool name, such as `skills.activate`.' },
  })
  tool: string;

  @ApiField(() => GraphQLJSON, {
    nullable: true,
    openapi: {
      type: 'object',
      additionalProperties: true,
      description: 'The arguments as the model (or the API caller) sent them.',
    },
    graphql: { description: 'The arguments as the model (or the caller) sent them.' },
  })
  args: Record<string, unknown> | null;

  @ApiField(() => ToolCardStatus, { openapi: { enum: ['ok', 'error'] } })
  status: 'ok' | 'error';

  // GraphQL carries the summary as JSON: its fields depend on the tool.
  @ApiField(() => GraphQLJSON, {
    openapi: { type: () => ToolCardSummaryDto },
    graphql: { description: '`{skill, path?, type?, count?, candidates?, version?, versionWarning?, truncated}`.' },
  })
  summary: ToolCardSummaryDto;

  @ApiField({ graphql: { description: 'What the tool answered (an error text when status is `error`).' } })
  output: string;

  @ApiField(() => Float)
  durationMs: number;
}

@ObjectType('MessageCommand', { description: 'The command a user message ran.' })
export class MessageCommandDto {
  @ApiField()
  name: string;

  @ApiField({ description: 'Everything after `/name`, trimmed.' })
  arguments: string;

  @ApiField({
    description: "The command's template with the arguments filled in: what the model got as the user's message.",
  })
  prompt: string;
}

@ObjectType('Message')
export class MessageDto {
  @ApiField(() => ID, { openapi: { format: 'uuid' } })
  id: string;

  @ApiField(() => Int, {
    openapi: { minimum: 1, description: 'Position in the chat, from 1.' },
    graphql: { description: 'Position within the chat, from 1.' },
  })
  seq: number;

  @ApiField(() => MessageRole, { openapi: { enum: ['user', 'assistant', 'tool'] } })
  role: 'user' | 'assistant' | 'tool';

  @ApiField()
  content: string;

  @ApiField(() => [ToolCardDto])
  toolCards: ToolCardDto[];

  @ApiField(() => String, {
    nullable: true,
    description:
      'The first skill a user message invoked explicitly (`/name`, `$name`); all of them are in `invokedSkills`.',
  })
  invokedSkill: string | null;

  @ApiField(() => [String], { description: 'Every skill a user message invoked explicitly, in order (up to 5).' })
  invokedSkills: string[];

  @ApiField(() => MessageCommandDto, { nullable: true, description: 'The command a user message ran.' })
  command: MessageCommandDto | null;

  @ApiField(() => String, { nullable: true })
  model: string | null;

  @ApiField(() => GraphQLDateTime, { openapi: { type: String, format: 'date-time' } })
  createdAt: string;
}

@ObjectType('ChatPage')
export class ChatPageDto extends PageDto {
  @ApiField(() => [ChatDto], { openapi: { description: 'Newest first.' } })
  items: ChatDto[];
}

export class OwnedChatPageDto extends PageDto {
  @ApiProperty({ type: () => [OwnedChatDto], description: 'Newest first.' })
  items: OwnedChatDto[];
}

@ObjectType('MessagePage')
export class MessagePageDto extends PageDto {
  @ApiField(() => [MessageDto], { openapi: { description: 'In order.' } })
  items: MessageDto[];
}

/** One turn's answer (also the data of the stream's `done` event). */
@ObjectType('Turn', {
  description: "One turn's answer, as REST's POST /v1/chats/{id}/messages answers it (and the `done` event carries).",
})
export class TurnDto {
  @ApiField(() => MessageDto, {
    nullable: true,
    description:
      'The user message stored. Null only in a chat of the OpenAI-compatible gateway, for a request that brought ' +
      "the results of the client's own tools and no new user message.",
  })
  userMessage: MessageDto | null;

  @ApiField(() => MessageDto)
  assistantMessage: MessageDto;

  @ApiField(() => [ActivatedSkillDto], { description: "The chat's activated skills after the turn." })
  activatedSkills: ActivatedSkillDto[];

  @ApiField(() => String, {
    nullable: true,
    description: 'The first invoked skill; all of them are in `invokedSkills`.',
  })
  invokedSkill: string | null;

  @ApiField(() => [String], { description: 'The skills the message invoked explicitly, in order.' })
  invokedSkills: string[];

  @ApiField(() => MessageCommandDto, {
    nullable: true,
    description: 'The command the message ran, with the prompt it expanded to.',
  })
  command: MessageCommandDto | null;
}

@ObjectType('ToolRun', {
  description: 'A skill tool run through the API against a chat, stored like a model-made call.',
})
export class ToolRunDto {
  @ApiField(() => ToolCardDto)
  toolCard: ToolCardDto;

  @ApiField(() => [ActivatedSkillDto])
  activatedSkills: ActivatedSkillDto[];
}

@ObjectType('ToolDefinition')
export class ContextToolDto {
  @ApiField({
    openapi: { example: 'skills.activate' },
    graphql: { description: 'Canonical name, such as `skills.activate`.' },
  })
  name: string;

  @ApiField({
    openapi: {
      example: 'skills_activate',
      description: 'The name on the wire (model APIs allow only `[a-zA-Z0-9_-]`).',
    },
    graphql: { description: 'The name model APIs see, such as `skills_activate`.' },
  })
  wireName: string;

  @ApiField()
  description: string;

  @ApiField(() => GraphQLJSON, {
    openapi: { type: 'object', additionalProperties: true },
    description: 'JSON Schema of the arguments.',
  })
  inputSchema: Record<string, unknown>;
}

@ObjectType('ActivatedVersion', {
  description:
    'An activated skill: the version the chat reads, the one loaded now, and whether activating it again moves ' +
    'the chat to a newer one.',
})
export class ContextActivatedVersionDto {
  @ApiField()
  name: string;

  @ApiField(() => String, {
    nullable: true,
    openapi: { description: 'The version the chat activated and reads (`sha256:…`); null when it has none.' },
    graphql: { description: 'The version the chat activated and reads (`sha256:…`).' },
  })
  version: string | null;

  @ApiField(() => String, {
    nullable: true,
    description: 'The version loaded now; null when the skill is gone or has none.',
  })
  currentVersion: string | null;

  @ApiField({
    openapi: {
      enum: ['current', 'newer-available', 'disabled', 'filtered-out', 'gone'],
      description:
        '`newer-available`: activating the skill again moves the chat to `currentVersion`; `disabled`, ' +
        "`filtered-out` (by the user's or the chat's filter) and `gone`: it cannot be used now.",
    },
    graphql: { description: '`current`, `newer-available`, `disabled`, `filtered-out` or `gone`.' },
  })
  status: 'current' | 'newer-available' | 'disabled' | 'filtered-out' | 'gone';
}

@ObjectType('SkillFilter', { description: 'Names or `prefix-*` patterns; an absent list does not narrow.' })
export class SkillFilterDto {
  @ApiField(() => [String], {
    optional: true,
    openapi: { description: 'Only these skills (names or `prefix-*` patterns).' },
  })
  include?: string[];

  @ApiField(() => [String], {
    optional: true,
    openapi: { description: 'Never these skills (names or `prefix-*` patterns).' },
  })
  exclude?: string[];
}

@ObjectType('ContextSkills', {
  description:
    "The catalogue this chat's prompts get: the user's personal skills included, narrowed by the user's and the " +
    "chat's filters.",
})
export class ContextSkillsDto {
  @ApiField(() => [String], { openapi: { description: 'The skills offered in this chat.' } })
  offered: string[];

  @ApiField(() => [String], { openapi: { description: 'Skills the filters leave out.' } })
  filteredOut: string[];

  @ApiField(() => SkillFilterDto, {
    nullable: true,
    openapi: { description: "The user's filter (`PUT /v1/me/skills`)." },
  })
  userFilter: SkillFilterDto | null;

  @ApiField(() => SkillFilterDto, {
    nullable: true,
    openapi: { description: "The chat's filter (`PUT /v1/chats/:id/skills`)." },
  })
  chatFilter: SkillFilterDto | null;
}

/** Exactly what the model would get next. */
@ObjectType('ContextCatalogue', {
  description: 'The catalogue in the system prompt: whole, or a ranked subset within the budget.',
})
export class ContextCatalogueDto {
  @ApiField({
    openapi: {
      description:
        'Every skill the chat may use is listed (in name order, the same bytes every turn); false: a ranked ' +
        'subset within the budget.',
    },
    graphql: { description: 'Every skill the chat may use is listed (in name order, the same bytes every turn).' },
  })
  complete: boolean;

  @ApiField(() => [String], {
    openapi: {
      description:
        'The skills the catalogue lists, in the order shown (activated and invoked skills first when partial).',
    },
    graphql: { description: 'The listed skills, in the order shown.' },
  })
  listed: string[];

  @ApiField(() => Int, {
    openapi: { type: Number, description: 'Skills the chat may use that are not listed (found with skills.search).' },
    graphql: { description: 'Skills the chat may use that are not listed.' },
  })
  unlisted: number;

  @ApiField(() => Int, {
    openapi: { type: Number, description: "The catalogue's size in o200k tokens, as the budget counts it." },
    graphql: { description: 'Size in o200k tokens, as the budget counts it.' },
  })
  tokens: number;

  @ApiField(() => Int, { openapi: { type: Number, description: '`app.skills.catalogue_budget_tokens`.' } })
  budgetTokens: number;

  @ApiField(() => Int, { openapi: { type: Number, description: '`app.skills.catalogue_max_skills`.' } })
  maxSkills: number;
}

@ObjectType('ChatContext', {
  description: 'Exactly what the model would get next in a chat (the twin of GET /v1/chats/{id}/context).',
})
export class ChatContextDto {
  @ApiField(() => String, {
    nullable: true,
    openapi: { description: 'The model that would answer; null when none is configured.' },
  })
  model: string | null;

  @ApiField()
  systemPrompt: string;

  @ApiField(() => ContextCatalogueDto, {
    nullable: true,
    description: 'The catalogue in the system prompt; null with skills off.',
  })
  catalogue: ContextCatalogueDto | null;

  @ApiField(() => [ContextToolDto], {
    openapi: {
      description:
        'The tools of the configured style (`app.tools.style`), exactly as the model is sent them; empty when ' +
        'they are not offered.',
    },
    graphql: {
      description:
        'The tools of the configured style, exactly as the model is sent them; empty when they are not offered.',
    },
  })
  tools: ContextToolDto[];

  @ApiField(() => [String], {
    openapi: { description: "Names of the chat's activated skills." },
    graphql: { description: 'Names of the skills the chat has activated.' },
  })
  activatedSkills: string[];

  @ApiField(() => [ContextActivatedVersionDto], {
    openapi: {
      description:
        'Each activated skill: the version the chat reads, the version loaded now, and whether activating it ' +
        'again would move the chat to a newer one.',
    },
  })
  activatedVersions: ContextActivatedVersionDto[];

  @ApiField(() => ContextSkillsDto, {
    openapi: {
      description:
        "The catalogue this chat's prompts get: the user's personal skills included, narrowed by the user's and " +
        "the chat's filters.",
    },
  })
  skills: ContextSkillsDto;

  @ApiField(() => [ContextCommandDto], { description: 'The commands the system prompt lists.' })
  commands: ContextCommandDto[];
}

@ObjectType('ContextCommand', { description: 'A command the system prompt lists.' })
export class ContextCommandDto {
  @ApiField()
  name: string;

  @ApiField()
  description: string;

  @ApiField(() => String, { nullable: true })
  argumentHint: string | null;

  @ApiField(() => [String])
  requiredSkills: string[];
}
