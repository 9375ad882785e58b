import { ArgsType, Field, ID } from '@nestjs/graphql';
import { IsBoolean, IsOptional, IsString } from 'class-validator';
import { ActivateToolDto, CreateChatDto, ReadResourceToolDto, SendMessageDto } from '../../chat/dto/chat.dto.js';

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
  @Field(() => String, { nullable: true, description: 'Up to 200 characters.' })
  declare title?: string;
}

@ArgsType()
export class SendMessageArgs extends SendMessageDto {
  @Field(() => ID)
  @IsString()
  chatId: string;

  @Field({ description: '1–100,000 characters; a leading `/name` (a loaded skill) invokes that skill explicitly.' })
  declare content: string;

  @Field(() => String, { nullable: true, description: 'A configured model (`app.models`); default: the default model.' })
  declare model?: string;

  @Field(() => Boolean, { nullable: true, description: '`false` turns the skill tools off for this message (the fallback applies).' })
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
}

@ArgsType()
export class ActivateSkillArgs extends ActivateToolDto {
  @Field(() => ID)
  @IsString()
  chatId: string;

  @Field({ description: 'The skill name.' })
  declare name: string;
}

@ArgsType()
export class ReadSkillResourceArgs extends ReadResourceToolDto {
  @Field(() => ID)
  @IsString()
  chatId: string;

  @Field({ description: 'The skill name.' })
  declare name: string;

  @Field({ description: 'Relative to the skill folder, such as `references/REFERENCE.md`.' })
  declare path: string;
}

@ArgsType()
export class ChatEventsArgs {
  @Field(() => ID)
  @IsString()
  chatId: string;
}
