import { Type } from 'class-transformer';
import { IsBoolean, IsInt, IsNotEmpty, IsOptional, IsString, Length, Max, MaxLength, Min } from 'class-validator';

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

export class PageQueryDto {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  limit?: number;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  offset?: number;
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
