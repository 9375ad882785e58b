import { Field, Float, ID, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import { GraphQLDateTime } from '../scalars/date-time.scalar.js';
import { GraphQLJSON } from '../scalars/json.scalar.js';
import { PageOf } from './page.model.js';

export const MessageRole = { user: 'user', assistant: 'assistant', tool: 'tool' } as const;
registerEnumType(MessageRole, { name: 'MessageRole', description: '`tool` messages hold tool calls made through the external-loop API.' });

export const ToolCardStatus = { ok: 'ok', error: 'error' } as const;
registerEnumType(ToolCardStatus, { name: 'ToolCardStatus' });

@ObjectType('ToolCard', { description: 'The user-visible record of one tool call.' })
export class ToolCardModel {
  @Field(() => ID)
  id: string;

  @Field({ description: 'The canonical tool name, such as `skills.activate`.' })
  tool: string;

  @Field(() => GraphQLJSON, { nullable: true, description: 'The arguments as the model (or the caller) sent them.' })
  args: unknown;

  @Field(() => ToolCardStatus)
  status: string;

  @Field(() => GraphQLJSON, { description: '`{skill, path?, type?, count?, candidates?, version?, versionWarning?, truncated}`.' })
  summary: unknown;

  @Field({ description: 'What the tool answered (an error text when status is `error`).' })
  output: string;

  @Field(() => Float)
  durationMs: number;
}

@ObjectType('MessageCommand', { description: 'The command a user message ran.' })
export class MessageCommandModel {
  @Field()
  name: string;

  @Field({ description: 'Everything after `/name`, trimmed.' })
  arguments: string;

  @Field({ description: "The command's template with the arguments filled in: what the model got as the user's message." })
  prompt: string;
}

@ObjectType('Message')
export class MessageModel {
  @Field(() => ID)
  id: string;

  @Field(() => Int, { description: 'Position within the chat, from 1.' })
  seq: number;

  @Field(() => MessageRole)
  role: string;

  @Field()
  content: string;

  @Field(() => [ToolCardModel])
  toolCards: ToolCardModel[];

  @Field(() => String, { nullable: true, description: 'The first skill a user message invoked explicitly (`/name`, `$name`); all of them are in `invokedSkills`.' })
  invokedSkill: string | null;

  @Field(() => [String], { description: 'Every skill a user message invoked explicitly, in order (up to 5).' })
  invokedSkills: string[];

  @Field(() => MessageCommandModel, { nullable: true, description: 'The command a user message ran.' })
  command: MessageCommandModel | null;

  @Field(() => String, { nullable: true })
  model: string | null;

  @Field(() => GraphQLDateTime)
  createdAt: Date;
}

@ObjectType('MessagePage')
export class MessagePageModel extends PageOf(MessageModel) {}
