import { Field, ID, ObjectType, registerEnumType } from '@nestjs/graphql';
import { GraphQLDateTime } from '../scalars/date-time.scalar.js';

export const UserRole = { admin: 'admin', member: 'member' } as const;
registerEnumType(UserRole, { name: 'UserRole' });

export const AuthMode = { api_key: 'api_key', none: 'none' } as const;
registerEnumType(AuthMode, { name: 'AuthMode', description: 'The auth mode in force: `none` means every call acts as the admin `local`.' });

@ObjectType('CurrentUser', { description: 'The caller (the twin of GET /v1/me).' })
export class CurrentUserModel {
  @Field(() => ID)
  id: string;

  @Field()
  name: string;

  @Field(() => UserRole)
  role: string;

  @Field()
  disabled: boolean;

  @Field(() => GraphQLDateTime)
  createdAt: Date;

  @Field(() => AuthMode)
  authMode: string;

  @Field(() => ID, { nullable: true, description: 'The key this call came with; null while auth is off.' })
  keyId: string | null;
}
