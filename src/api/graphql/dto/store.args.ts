import { ArgsType, Field, ID, Int } from '@nestjs/graphql';
import { IsIn, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { RollbackDto, SkillFilterBodyDto, SwitchDto, VersionsQueryDto } from '../../http/dto/store.dto.js';
import { SkillNameArgs } from './skill.args.js';

/** Arguments of the store operations: each extends the REST body or query it mirrors, so its rules are REST's. */

@ArgsType()
export class SkillVersionsArgs extends VersionsQueryDto {
  @Field()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name: string;

  @Field(() => String, {
    nullable: true,
    description: "`shared` or `personal`; default: the caller's personal skill of that name, else the shared one.",
  })
  declare scope?: 'shared' | 'personal';
}

@ArgsType()
export class RollbackSkillArgs extends RollbackDto {
  @Field()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name: string;

  @Field(() => Int)
  declare version: number;
}

@ArgsType()
export class SetSkillEnabledArgs extends SwitchDto {
  @Field()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name: string;

  @Field()
  declare enabled: boolean;
}

@ArgsType()
export class UninstallSkillArgs extends SkillNameArgs {
  @Field(() => String, { nullable: true, description: '`personal` (default: one of your own) or `shared` (admins).' })
  @IsOptional()
  @IsIn(['shared', 'personal'], { message: 'scope must be shared or personal' })
  scope?: 'shared' | 'personal';
}

@ArgsType()
export class SkillFilterArgs extends SkillFilterBodyDto {
  @Field(() => [String], {
    nullable: true,
    description: 'Only these skills (names or `prefix-*`); absent: no restriction.',
  })
  declare include?: string[];

  @Field(() => [String], { nullable: true, description: 'Never these skills (names or `prefix-*`).' })
  declare exclude?: string[];
}

@ArgsType()
export class ChatSkillFilterArgs extends SkillFilterArgs {
  @Field(() => ID)
  @IsString()
  chatId: string;
}
