import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PageDto } from '../../common/page-response.dto.js';

/** OpenAPI schemas of what `chat.presenter.ts` answers; documentation only, nothing is built from them. */

export class ChatDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ type: String, nullable: true })
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

  @ApiProperty({ enum: ['explicit', 'tool', 'fallback'], description: 'How the skill was first activated in this chat.' })
  how: 'explicit' | 'tool' | 'fallback';

  @ApiProperty({ type: String, format: 'date-time' })
  firstActivatedAt: string;

  @ApiProperty({ type: String, format: 'date-time' })
  lastActivatedAt: string;

  @ApiProperty({ type: 'integer', minimum: 1 })
  count: number;
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

  @ApiProperty()
  truncated: boolean;
}

/** One tool call as the user sees it; the summary never repeats the body, `output` is what the model read. */
export class ToolCardDto {
  @ApiProperty()
  id: string;

  @ApiProperty({ example: 'skills.activate', description: '`skills.activate` or `skills.readResource`, or what a model asked for that does not exist.' })
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

  @ApiProperty({ type: String, nullable: true, description: 'The skill a user message invoked explicitly (`/name`).' })
  invokedSkill: string | null;

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

  @ApiProperty({ type: String, nullable: true })
  invokedSkill: string | null;
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

/** Exactly what the model would get next. */
export class ChatContextDto {
  @ApiProperty({ type: String, nullable: true, description: 'The model that would answer; null when none is configured.' })
  model: string | null;

  @ApiProperty()
  systemPrompt: string;

  @ApiProperty({ type: () => [ContextToolDto], description: 'Empty when the tools are not offered.' })
  tools: ContextToolDto[];

  @ApiProperty({ type: [String], description: "Names of the chat's activated skills." })
  activatedSkills: string[];
}
