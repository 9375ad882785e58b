import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsOptional, IsString, IsUUID, MaxLength, ValidateIf } from 'class-validator';
import { PageDto } from './page-response.dto.js';

export class CreateGroupDto {
  @ApiProperty({ example: 'finance', maxLength: 128, description: '1–128 characters without control characters.' })
  @IsString()
  @MaxLength(128, { message: 'name must be at most 128 characters' })
  name: string;
}

export class GroupDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'finance' })
  name: string;

  @ApiProperty({
    enum: ['admin', 'provider'],
    description: "`admin`: made and filled by admins; `provider`: from the sign-in provider's groups claim.",
  })
  source: 'admin' | 'provider';

  @ApiProperty({ type: String, format: 'date-time' })
  createdAt: string;

  @ApiProperty({ type: 'integer', minimum: 0 })
  memberCount: number;
}

export class GroupPageDto extends PageDto {
  @ApiProperty({ type: () => [GroupDto] })
  items: GroupDto[];
}

export class GroupMemberDto {
  @ApiProperty({ format: 'uuid' })
  userId: string;

  @ApiProperty({ example: 'ada' })
  name: string;

  @ApiProperty({ type: String, format: 'date-time' })
  addedAt: string;
}

export class GroupDetailDto extends GroupDto {
  @ApiProperty({ type: () => [GroupMemberDto] })
  members: GroupMemberDto[];
}

export class GroupMembersDto {
  @ApiProperty({ type: () => [GroupMemberDto] })
  members: GroupMemberDto[];
}

class NamedRefDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty()
  name: string;
}

/** Who sees a shared skill and who may publish it besides admins. */
export class SkillAccessDto {
  @ApiProperty({ example: 'pdf' })
  name: string;

  @ApiProperty({
    enum: ['team', 'groups'],
    description: "`team`: in everyone's catalogue; `groups`: only in the catalogues of the members of `groups`.",
  })
  audience: 'team' | 'groups';

  @ApiProperty({ type: () => [NamedRefDto] })
  groups: NamedRefDto[];

  @ApiProperty({ type: () => NamedRefDto, nullable: true, description: 'An editor who may publish and roll it back.' })
  owningUser: NamedRefDto | null;

  @ApiProperty({
    type: () => NamedRefDto,
    nullable: true,
    description: 'A group whose editors may publish and roll it back.',
  })
  owningGroup: NamedRefDto | null;
}

export class SetSkillAccessDto {
  @ApiPropertyOptional({ enum: ['team', 'groups'] })
  @IsOptional()
  @IsIn(['team', 'groups'], { message: 'audience must be one of team, groups' })
  audience?: 'team' | 'groups';

  @ApiPropertyOptional({
    type: [String],
    format: 'uuid',
    maxItems: 100,
    description: "The groups' ids, with audience `groups` (at least one).",
  })
  @IsOptional()
  @IsArray({ message: 'groups must be an array of group ids' })
  @ArrayMaxSize(100, { message: 'groups must hold at most 100 ids' })
  @IsUUID('all', { each: true, message: 'groups must hold group ids (UUIDs)' })
  groups?: string[];

  @ApiPropertyOptional({ type: String, format: 'uuid', nullable: true, description: 'null: no owning user.' })
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsUUID('all', { message: 'owningUserId must be a user id (UUID) or null' })
  owningUserId?: string | null;

  @ApiPropertyOptional({ type: String, format: 'uuid', nullable: true, description: 'null: no owning group.' })
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsUUID('all', { message: 'owningGroupId must be a group id (UUID) or null' })
  owningGroupId?: string | null;
}
