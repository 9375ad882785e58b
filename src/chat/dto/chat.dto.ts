import { Type } from 'class-transformer';
import { IsBoolean, IsNotEmpty, IsOptional, IsString, Length, MaxLength } from 'class-validator';

export class CreateChatDto {
  @IsOptional()
  @IsString()
  @MaxLength(200)
  title?: string;
}

export class SendMessageDto {
  @IsString()
  @Length(1, 100_000)
  content: string;

  @IsOptional()
  @IsString()
  @IsNotEmpty()
  model?: string;

  /** `false` turns the skill tools off for this message (the fallback applies). */
  @IsOptional()
  @IsBoolean()
  tools?: boolean;
}

export class ContextQueryDto {
  @IsOptional()
  @IsString()
  model?: string;

  @IsOptional()
  @Type(() => String)
  @IsString()
  tools?: string;
}

export class ActivateToolDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name: string;
}

export class ReadResourceToolDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name: string;

  @IsString()
  @MaxLength(4096)
  path: string;
}
