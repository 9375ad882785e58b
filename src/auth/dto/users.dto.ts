import { Type } from 'class-transformer';
import { IsBoolean, IsDate, IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { USER_NAME_PATTERN, USER_ROLES, type UserRole } from '../../persistence/entities/user.entity.js';

export class CreateUserDto {
  @IsString()
  @Matches(USER_NAME_PATTERN, { message: "name must be 1–64 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit" })
  name: string;

  @IsOptional()
  @IsIn(USER_ROLES, { message: `role must be one of ${USER_ROLES.join(', ')}` })
  role?: UserRole;
}

export class UpdateUserDto {
  @IsOptional()
  @IsIn(USER_ROLES, { message: `role must be one of ${USER_ROLES.join(', ')}` })
  role?: UserRole;

  @IsOptional()
  @IsBoolean()
  disabled?: boolean;
}

export class CreateApiKeyDto {
  @IsOptional()
  @IsString()
  @MaxLength(200)
  label?: string;

  /** ISO 8601; the key stops working then. */
  @IsOptional()
  @Type(() => Date)
  @IsDate({ message: 'expiresAt must be an ISO 8601 date-time' })
  expiresAt?: Date;
}
