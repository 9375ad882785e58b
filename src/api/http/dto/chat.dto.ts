import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsNotEmpty, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { MAX_PREVIEW_MESSAGE } from '@skillhost/core';
import { NEW_CHAT_TITLE_DESCRIPTION } from '../../../domain/chats/chat-title.js';

export class CreateChatDto {
  @ApiPropertyOptional({ maxLength: 200, description: NEW_CHAT_TITLE_DESCRIPTION })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  title?: string;
}

export class SendMessageDto {
  @ApiProperty({
    minLength: 1,
    maxLength: 100_000,
    description: 'The message; a leading `/name` (a loaded skill) invokes that skill explicitly.',
  })
  @IsString()
  @Length(1, 100_000)
  content: string;

  @ApiPropertyOptional({ minLength: 1, description: 'A configured model (`app.models`); default: the default model.' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  model?: string;

  /** `false` turns the skill tools off for this message (the fallback applies). */
  @ApiPropertyOptional({
    description:
      '`false` turns the skill tools off for this message (an explicit invocation then puts the SKILL.md in the ' +
      'prompt).',
  })
  @IsOptional()
  @IsBoolean()
  tools?: boolean;
}

export class ContextQueryDto {
  @ApiPropertyOptional({ description: 'A configured model; default: the default model.' })
  @IsOptional()
  @IsString()
  model?: string;

  @ApiPropertyOptional({
    type: String,
    enum: ['true', 'false'],
    example: 'false',
    description: '`false`: as if the message turned the skill tools off.',
  })
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'tools must be `true` or `false`' })
  tools?: 'true' | 'false';

  @ApiPropertyOptional({
    maxLength: MAX_PREVIEW_MESSAGE,
    description:
      "A message as the user would send it: the prompt's catalogue is then the one a turn with this message " +
      "would list (ranked for it, with the chat's last messages, when the chat's skills do not all fit the " +
      'budget).',
  })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_PREVIEW_MESSAGE)
  message?: string;
}
