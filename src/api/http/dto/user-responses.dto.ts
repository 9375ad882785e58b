import { ApiProperty } from '@nestjs/swagger';
import { PageDto } from './page-response.dto.js';
import { USER_ROLES, type UserRole } from '../../../infra/database/entities/user.entity.js';
import { API_KEY_PATTERN } from '../../../domain/users/api-key.js';

/** OpenAPI schemas of what `user.presenter.ts` and the account routes answer; documentation only. */

export class UserDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'ada' })
  name: string;

  @ApiProperty({ enum: USER_ROLES })
  role: UserRole;

  @ApiProperty({ description: "A disabled user's keys stop working; its chats stay." })
  disabled: boolean;

  @ApiProperty({ type: String, format: 'date-time' })
  createdAt: string;
}

export class UserPageDto extends PageDto {
  @ApiProperty({ type: () => [UserDto] })
  items: UserDto[];
}

/** The caller: its user, the auth mode in force, and the key it came with. */
export class MeDto extends UserDto {
  @ApiProperty({ enum: ['api_key', 'none'], description: '`none`: auth is off and every request acts as the admin `local`.' })
  authMode: 'api_key' | 'none';

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'Null when auth is off.' })
  keyId: string | null;
}

/** An API key as listed: never the key itself. */
export class ApiKeyDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ description: "The owner's name." })
  user: string;

  @ApiProperty({ type: String, nullable: true })
  label: string | null;

  @ApiProperty({ example: 'skh_AbC123', description: 'The first characters of the key, to tell keys apart.' })
  prefix: string;

  @ApiProperty({ type: String, format: 'date-time' })
  createdAt: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Recorded at most once a minute.' })
  lastUsedAt: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  revokedAt: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  expiresAt: string | null;
}

export class ApiKeyListDto {
  @ApiProperty({ type: () => [ApiKeyDto] })
  items: ApiKeyDto[];
}

export class CreatedApiKeyDto extends ApiKeyDto {
  @ApiProperty({ pattern: API_KEY_PATTERN.source, description: 'The key itself: shown this once, it cannot be read again.' })
  key: string;
}
