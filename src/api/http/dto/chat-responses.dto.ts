import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PageDto } from './page-response.dto.js';
import { CHAT_TITLE_DESCRIPTION } from '../../../domain/chats/chat-title.js';

/** OpenAPI schemas of what `chat.presenter.ts` answers; documentation only, nothing is built from them. */

export class ChatDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ type: String, nullable: true, description: CHAT_TITLE_DESCRIPTION })
  title: string | null;

  @ApiProperty({ type: String, format: 'date-time' })
  createdAt: string;

  @ApiProperty({ type: String, format: 'date-time', description: 'Bumped by every stored turn or tool run.' })
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

export class ActivatedSkillDto {
  @ApiProperty({ description: 'The skill name.' })
  name: string;

  @ApiProperty({
    enum: ['explicit', 'tool', 'fallback', 'command'],
    description: 'How the skill was first activated in this chat: invoked by the user with tools (`explicit`) or without (`fallback`), by the model (`tool`), or by a command the user ran (`command`).',
  })
  how: 'explicit' | 'tool' | 'fallback' | 'command';

  @ApiProperty({ type: String, format: 'date-time' })
  firstActivatedAt: string;

  @ApiProperty({ type: String, format: 'date-time' })
  lastActivatedAt: string;

  @ApiProperty({ type: 'integer', minimum: 1 })
  count: number;

  @ApiProperty({ type: String, nullable: true, description: 'The version last activated (`sha256:…`), which the chat reads until it activates the skill again; null for skills without versions (programmatic, or past `max_install_bytes`).' })
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

  @ApiPropertyOptional({ type: [String], description: 'For `use_skill` without a good enough match: the closest skills.' })
  candidates?: string[];

  @ApiPropertyOptional({ description: 'For an activation in a chat: the version activated (`sha256:…`).' })
  version?: string;

  @ApiPropertyOptional({ description: 'For an activation in a chat whose version could not be pinned (the skill is past `max_install_bytes`): why; after a change on disk the chat reads the new files.' })
  versionWarning?: string;

  @ApiProperty()
  truncated: boolean;
}

/** One tool call as the user sees it; the summary never repeats the body, `output` is what the model read. */
export class ToolCardDto {
  @ApiProperty()
  id: string;

  @ApiProperty({
    example: 'skills.activate',
    description: 'The canonical tool name (`skills.activate`, `skills.readResource`, `skills.listResources`, `activate_skill`, `load_skill`, `use_skill`), or what a model asked for that does not exist.',
  })
  tool: string;

  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, description: 'The arguments as the model (or the API caller) sent them.' })
  args: Record<string, unknown> | null;

  @ApiProperty({ enum: ['ok', 'error'] })
  status: 'ok' | 'error';

  @ApiProperty({ type: () => ToolCardSummaryDto })
  summary: ToolCardSummaryDto;

  @ApiProperty()
  output: string;

  @ApiProperty()
  durationMs: number;
}

export class MessageCommandDto {
  @ApiProperty()
  name: string;

  @ApiProperty({ description: 'Everything after `/name`, trimmed.' })
  arguments: string;

  @ApiProperty({ description: "The command's template with the arguments filled in: what the model got as the user's message." })
  prompt: string;
}

export class MessageDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ type: 'integer', minimum: 1, description: 'Position in the chat, from 1.' })
  seq: number;

  @ApiProperty({ enum: ['user', 'assistant', 'tool'] })
  role: 'user' | 'assistant' | 'tool';

  @ApiProperty()
  content: string;

  @ApiProperty({ type: () => [ToolCardDto] })
  toolCards: ToolCardDto[];

  @ApiProperty({ type: String, nullable: true, description: 'The first skill a user message invoked explicitly (`/name`, `$name`); all of them are in `invokedSkills`.' })
  invokedSkill: string | null;

  @ApiProperty({ type: [String], description: 'Every skill a user message invoked explicitly, in order (up to 5).' })
  invokedSkills: string[];

  @ApiProperty({ type: () => MessageCommandDto, nullable: true, description: 'The command a user message ran.' })
  command: MessageCommandDto | null;

  @ApiProperty({ type: String, nullable: true })
  model: string | null;

  @ApiProperty({ type: String, format: 'date-time' })
  createdAt: string;
}

export class ChatPageDto extends PageDto {
  @ApiProperty({ type: () => [ChatDto], description: 'Newest first.' })
  items: ChatDto[];
}

export class OwnedChatPageDto extends PageDto {
  @ApiProperty({ type: () => [OwnedChatDto], description: 'Newest first.' })
  items: OwnedChatDto[];
}

export class MessagePageDto extends PageDto {
  @ApiProperty({ type: () => [MessageDto], description: 'In order.' })
  items: MessageDto[];
}

/** One turn's answer (also the data of the stream's `done` event). */
export class TurnDto {
  @ApiProperty({ type: () => MessageDto })
  userMessage: MessageDto;

  @ApiProperty({ type: () => MessageDto })
  assistantMessage: MessageDto;

  @ApiProperty({ type: () => [ActivatedSkillDto], description: "The chat's activated skills after the turn." })
  activatedSkills: ActivatedSkillDto[];

  @ApiProperty({ type: String, nullable: true, description: 'The first invoked skill; all of them are in `invokedSkills`.' })
  invokedSkill: string | null;

  @ApiProperty({ type: [String], description: 'The skills the message invoked explicitly, in order.' })
  invokedSkills: string[];

  @ApiProperty({ type: () => MessageCommandDto, nullable: true, description: 'The command the message ran, with the prompt it expanded to.' })
  command: MessageCommandDto | null;
}

export class ToolRunDto {
  @ApiProperty({ type: () => ToolCardDto })
  toolCard: ToolCardDto;

  @ApiProperty({ type: () => [ActivatedSkillDto] })
  activatedSkills: ActivatedSkillDto[];
}

export class ContextToolDto {
  @ApiProperty({ example: 'skills.activate' })
  name: string;

  @ApiProperty({ example: 'skills_activate', description: 'The name on the wire (model APIs allow only `[a-zA-Z0-9_-]`).' })
  wireName: string;

  @ApiProperty()
  description: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'JSON Schema of the arguments.' })
  inputSchema: Record<string, unknown>;
}

export class ContextActivatedVersionDto {
  @ApiProperty()
  name: string;

  @ApiProperty({ type: String, nullable: true, description: 'The version the chat activated and reads (`sha256:…`); null when it has none.' })
  version: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'The version loaded now; null when the skill is gone or has none.' })
  currentVersion: string | null;

  @ApiProperty({ enum: ['current', 'newer-available', 'disabled', 'filtered-out', 'gone'], description: "`newer-available`: activating the skill again moves the chat to `currentVersion`; `disabled`, `filtered-out` (by the user's or the chat's filter) and `gone`: it cannot be used now." })
  status: 'current' | 'newer-available' | 'disabled' | 'filtered-out' | 'gone';
}

export class SkillFilterDto {
  @ApiPropertyOptional({ type: [String], description: 'Only these skills (names or `prefix-*` patterns).' })
  include?: string[];

  @ApiPropertyOptional({ type: [String], description: 'Never these skills (names or `prefix-*` patterns).' })
  exclude?: string[];
}

export class ContextSkillsDto {
  @ApiProperty({ type: [String], description: 'The skills offered in this chat.' })
  offered: string[];

  @ApiProperty({ type: [String], description: "Skills the filters leave out." })
  filteredOut: string[];

  @ApiProperty({ type: () => SkillFilterDto, nullable: true, description: "The user's filter (`PUT /v1/me/skills`)." })
  userFilter: SkillFilterDto | null;

  @ApiProperty({ type: () => SkillFilterDto, nullable: true, description: "The chat's filter (`PUT /v1/chats/:id/skills`)." })
  chatFilter: SkillFilterDto | null;
}

/** Exactly what the model would get next. */
export class ContextCatalogueDto {
  @ApiProperty({ description: "Every skill the chat may use is listed (in name order, the same bytes every turn); false: a ranked subset within the budget." })
  complete: boolean;

  @ApiProperty({ type: [String], description: 'The skills the catalogue lists, in the order shown (activated and invoked skills first when partial).' })
  listed: string[];

  @ApiProperty({ description: 'Skills the chat may use that are not listed (found with skills.search).' })
  unlisted: number;

  @ApiProperty({ description: 'The catalogue\'s size in o200k tokens, as the budget counts it.' })
  tokens: number;

  @ApiProperty({ description: '`app.skills.catalogue_budget_tokens`.' })
  budgetTokens: number;

  @ApiProperty({ description: '`app.skills.catalogue_max_skills`.' })
  maxSkills: number;
}

export class ChatContextDto {
  @ApiProperty({ type: String, nullable: true, description: 'The model that would answer; null when none is configured.' })
  model: string | null;

  @ApiProperty()
  systemPrompt: string;

  @ApiProperty({ type: () => ContextCatalogueDto, nullable: true, description: 'The catalogue in the system prompt; null with skills off.' })
  catalogue: ContextCatalogueDto | null;

  @ApiProperty({ type: () => [ContextToolDto], description: 'The tools of the configured style (`app.tools.style`), exactly as the model is sent them; empty when they are not offered.' })
  tools: ContextToolDto[];

  @ApiProperty({ type: [String], description: "Names of the chat's activated skills." })
  activatedSkills: string[];

  @ApiProperty({ type: () => [ContextActivatedVersionDto], description: 'Each activated skill: the version the chat reads, the version loaded now, and whether activating it again would move the chat to a newer one.' })
  activatedVersions: ContextActivatedVersionDto[];

  @ApiProperty({ type: () => ContextSkillsDto, description: "The catalogue this chat's prompts get: the user's personal skills included, narrowed by the user's and the chat's filters." })
  skills: ContextSkillsDto;

  @ApiProperty({ type: () => [ContextCommandDto], description: 'The commands the system prompt lists.' })
  commands: ContextCommandDto[];
}

export class ContextCommandDto {
  @ApiProperty()
  name: string;

  @ApiProperty()
  description: string;

  @ApiProperty({ type: String, nullable: true })
  argumentHint: string | null;

  @ApiProperty({ type: [String] })
  requiredSkills: string[];
}
