import { Args, Mutation, Query, Resolver } from '@nestjs/graphql';
import { AdminOnly, CurrentPrincipal, RequireScope } from '../http/decorators/auth.decorators.js';
import type { Principal } from '../../domain/users/principal.js';
import { ChatsService } from '../../domain/chats/chats.service.js';
import { AppError, ErrorCode } from '@skillhost/core';
import { RequireFeature } from '../http/guards/feature.guard.js';
import { SkillLifecycleService } from '../../domain/skills/store/skill-lifecycle.service.js';
import { RollbackResultDto, SkillFilterResultDto, SwitchResultDto, VersionHistoryDto } from '../http/dto/store.dto.js';
import {
  ChatSkillFilterArgs,
  RollbackSkillArgs,
  SetSkillEnabledArgs,
  SkillFilterArgs,
  SkillVersionsArgs,
  UninstallSkillArgs,
} from './dto/store.args.js';

/** The twin of SkillStoreController (installing takes an upload: REST and the CLI only). */
@Resolver()
@RequireFeature('skills')
export class SkillStoreResolver {
  constructor(
    private readonly lifecycle: SkillLifecycleService,
    private readonly chats: ChatsService,
  ) {}

  @Query(() => VersionHistoryDto, { description: "An installed skill's versions (GET /v1/skills/{name}/versions)." })
  @RequireScope('skills:read')
  skillVersions(@Args() { name, scope }: SkillVersionsArgs, @CurrentPrincipal() principal: Principal) {
    return this.lifecycle.versions(name, principal, scope);
  }

  @Mutation(() => RollbackResultDto, {
    description:
      'Makes an earlier version of a shared skill current; admins, and editors for the skills they or their groups ' +
      'own (POST /v1/admin/skills/{name}/rollback).',
  })
  rollbackSkill(@Args() { name, version }: RollbackSkillArgs, @CurrentPrincipal() principal: Principal) {
    return this.lifecycle.rollback(name, version, principal);
  }

  @Mutation(() => Boolean, {
    description:
      'Uninstalls one of your personal skills, or (scope `shared`, admins only) a shared skill (DELETE ' +
      '/v1/skills/{name}, /v1/admin/skills/{name}).',
  })
  async uninstallSkill(@Args() { name, scope }: UninstallSkillArgs, @CurrentPrincipal() principal: Principal) {
    if (scope === 'shared' && principal.role !== 'admin')
      throw new AppError(ErrorCode.FORBIDDEN, 'Only admins may uninstall shared skills.');
    await this.lifecycle.uninstall(name, scope ?? 'personal', principal);
    return true;
  }

  @Mutation(() => SwitchResultDto, {
    description:
      'Switches a skill on or off for everyone, persisted; admins only (PUT /v1/admin/skills/{name}/enabled).',
  })
  @AdminOnly()
  setSkillEnabled(@Args() { name, enabled }: SetSkillEnabledArgs, @CurrentPrincipal() principal: Principal) {
    return this.lifecycle.setEnabled(name, enabled, principal);
  }

  @Query(() => SkillFilterResultDto, {
    description: 'Your skill filter and the skills it offers you (GET /v1/me/skills).',
  })
  @RequireScope('skills:read')
  mySkillFilter(@CurrentPrincipal() principal: Principal) {
    return this.lifecycle.userFilter(principal);
  }

  @Mutation(() => SkillFilterResultDto, {
    description: 'Narrows the catalogue your chats get (PUT /v1/me/skills); no lists removes the filter.',
  })
  setMySkillFilter(@Args() filter: SkillFilterArgs, @CurrentPrincipal() principal: Principal) {
    return this.lifecycle.setUserFilter(principal, { include: filter.include, exclude: filter.exclude });
  }

  @Mutation(() => SkillFilterResultDto, {
    description: "Narrows one chat's catalogue over your own filter (PUT /v1/chats/{id}/skills).",
  })
  setChatSkillFilter(
    @Args() { chatId, include, exclude }: ChatSkillFilterArgs,
    @CurrentPrincipal() principal: Principal,
  ) {
    return this.chats.setSkillFilter(principal, chatId, { include, exclude });
  }
}
