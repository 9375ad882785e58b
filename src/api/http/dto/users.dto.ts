import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { isISO8601, IsBoolean, IsDate, IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { USER_NAME_PATTERN, USER_ROLES, type UserRole } from '../../../domain/users/user.types.js';

export class CreateUserDto {
  @ApiProperty({
    pattern: USER_NAME_PATTERN.source,
    example: 'ada',
    description: "1–64 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit.",
  })
  @IsString()
  @Matches(USER_NAME_PATTERN, {
    message: "name must be 1–64 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit",
  })
  name: string;

  @ApiPropertyOptional({ enum: USER_ROLES, default: 'member' })
  @IsOptional()
  @IsIn(USER_ROLES, { message: `role must be one of ${USER_ROLES.join(', ')}` })
  role?: UserRole;
}

export class UpdateUserDto {
  @ApiPropertyOptional({ enum: USER_ROLES })
  @IsOptional()
  @IsIn(USER_ROLES, { message: `role must be one of ${USER_ROLES.join(', ')}` })
  role?: UserRole;

  @ApiPropertyOptional({ description: "A disabled user's keys stop working." })
  @IsOptional()
  @IsBoolean()
  disabled?: boolean;
}

export class CreateApiKeyDto {
  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  label?: string;

  /** ISO 8601; the key stops working then. */
  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    description: 'The key stops working then; must be in the future.',
  })
  @IsOptional()
  // Only an ISO 8601 string naming a real date (no numbers, no Feb 30, no years past 9999) becomes a Date; anything
  // else fails @IsDate.
  @Transform(({ value }) =>
    typeof value === 'string' && isISO8601(value, { strict: true, strictSeparator: true }) ? new Date(value) : value,
  )
  @IsDate({ message: 'expiresAt must be an ISO 8601 date-time' })
  expiresAt?: Date;
}
