import { ID, ObjectType, registerEnumType } from '@nestjs/graphql';
import { ApiProperty } from '@nestjs/swagger';
import { PageDto } from './page-response.dto.js';
import { USER_ROLES, type UserRole } from '../../../domain/users/user.types.js';
import { API_KEY_PATTERN } from '../../../domain/users/api-key.js';
import { ApiField } from './api-field.decorator.js';
import { GraphQLDateTime } from '../../graphql/scalars/date-time.scalar.js';

/**
 * What `user.presenter.ts` and the account routes answer: the OpenAPI schemas (the class names) and,
 * where GraphQL answers the same shape, its object types (the names given to `@ObjectType`).
 * Documentation only.
 */

const UserRoleEnum = { admin: 'admin', editor: 'editor', member: 'member' } as const;
registerEnumType(UserRoleEnum, { name: 'UserRole' });

const AuthMode = { api_key: 'api_key', none: 'none' } as const;
registerEnumType(AuthMode, {
  name: 'AuthMode',
  description: 'The auth mode in force: `none` means every call acts as the admin `local`.',
});

/** GraphQL has no user type of its own: `CurrentUser` (MeDto) carries these fields. */
@ObjectType({ isAbstract: true })
export class UserDto {
  @ApiField(() => ID, { openapi: { format: 'uuid' } })
  id: string;

  @ApiField({ openapi: { example: 'ada' } })
  name: string;

  @ApiField(() => UserRoleEnum, { openapi: { enum: USER_ROLES } })
  role: UserRole;

  @ApiField({ openapi: { description: "A disabled user's keys stop working; its chats stay." } })
  disabled: boolean;

  @ApiField(() => GraphQLDateTime, { openapi: { type: String, format: 'date-time' } })
  createdAt: string;
}

export class UserPageDto extends PageDto {
  @ApiProperty({ type: () => [UserDto] })
  items: UserDto[];
}

/** The caller: its user, the auth mode in force, and the key it came with. */
@ObjectType('CurrentUser', { description: 'The caller (the twin of GET /v1/me).' })
export class MeDto extends UserDto {
  @ApiField(() => AuthMode, {
    openapi: {
      enum: ['api_key', 'none'],
      description: '`none`: auth is off and every request acts as the admin `local`.',
    },
  })
  authMode: 'api_key' | 'none';

  @ApiField(() => ID, {
    nullable: true,
    openapi: { type: String, format: 'uuid', description: 'Null when auth is off.' },
    graphql: { description: 'The key this call came with; null while auth is off.' },
  })
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
  @ApiProperty({
    pattern: API_KEY_PATTERN.source,
    description: 'The key itself: shown this once, it cannot be read again.',
  })
  key: string;
}
