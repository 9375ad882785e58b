import { ArgsType, Field, ID } from '@nestjs/graphql';
import { Allow, IsBoolean, IsOptional, IsString, MaxLength } from 'class-validator';
import { NEW_CHAT_TITLE_DESCRIPTION } from '../../../domain/chats/chat-title.js';
import { CreateChatDto, SendMessageDto } from '../../http/dto/chat.dto.js';
import { NulAllowed, StringsCheckedByService } from '../../http/pipes/validation.pipe.js';
import { MAX_PREVIEW_MESSAGE, RESOURCE_TYPES } from '@skillhost/core';
import { GraphQLJSON } from '../scalars/json.scalar.js';

/**
 * Arguments of the chat operations. Where REST has a body DTO, the arguments extend it: the
 * validation rules are inherited, never restated, and `declare` only adds the GraphQL field.
 * Chat ids are not checked here: any id that is not one of the caller's chats is CHAT_NOT_FOUND.
 */
@ArgsType()
export class ChatIdArgs {
  @Field(() => ID)
  @IsString()
  id: string;
}

@ArgsType()
export class CreateChatArgs extends CreateChatDto {
  @Field(() => String, { nullable: true, description: NEW_CHAT_TITLE_DESCRIPTION })
  declare title?: string;
}

@ArgsType()
export class SendMessageArgs extends SendMessageDto {
  @Field(() => ID)
  @IsString()
  chatId: string;

  @Field({ description: '1–100,000 characters; a leading `/name` (a loaded skill) invokes that skill explicitly.' })
  declare content: string;

  @Field(() => String, {
    nullable: true,
    description: 'A configured model (`app.models`); default: the default model.',
  })
  declare model?: string;

  @Field(() => Boolean, {
    nullable: true,
    description: '`false` turns the skill tools off for this message (the fallback applies).',
  })
  declare tools?: boolean;
}

/** REST's query string carries `tools` as text (`?tools=false`); here it is a Boolean. */
@ArgsType()
export class ChatContextArgs extends ChatIdArgs {
  @Field(() => String, { nullable: true, description: 'A configured model; default: the default model.' })
  @IsOptional()
  @IsString()
  model?: string;

  @Field(() => Boolean, { nullable: true, description: '`false`: as if the message turned the skill tools off.' })
  @IsOptional()
  @IsBoolean()
  tools?: boolean;

  @Field(() => String, {
    nullable: true,
    description:
      "A message as the user would send it: the prompt's catalogue is the one a turn with this message would list.",
  })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_PREVIEW_MESSAGE)
  message?: string;
}

/**
 * The tool operations' own arguments are checked by the tool's schema, as the model's calls and
 * REST's are (`@Allow()` only lets them through the DTO pipe): one check, one set of limits.
 */
/** The arguments of every tool operation that names a skill: the chat, and the skill. */
@ArgsType()
export class SkillToolArgs {
  @Field(() => ID)
  @IsString()
  chatId: string;

  @Field({ description: 'The skill name.' })
  @Allow()
  name: string;
}

@ArgsType()
export class ActivateSkillArgs extends SkillToolArgs {}

@ArgsType()
export class ReadSkillResourceArgs extends SkillToolArgs {
  @Field({ description: 'Relative to the skill folder, such as `references/REFERENCE.md`.' })
  @Allow()
  @NulAllowed()
  path: string;
}

@ArgsType()
export class ListSkillResourcesArgs extends SkillToolArgs {
  @Field(() => String, { nullable: true, description: `Only files of this type: ${RESOURCE_TYPES.join(', ')}.` })
  @Allow()
  type?: string;
}

@ArgsType()
export class RunSkillToolArgs {
  @Field(() => ID)
  @IsString()
  chatId: string;

  @Field({ description: "A tool of the configured style, by its canonical name (the context's `tools[].name`)." })
  @IsString()
  tool: string;

  @Field(() => GraphQLJSON, { description: "The tool's arguments, as its input schema describes them." })
  @Allow()
  @StringsCheckedByService()
  arguments: unknown;
}

@ArgsType()
export class ChatEventsArgs {
  @Field(() => ID)
  @IsString()
  chatId: string;
}
