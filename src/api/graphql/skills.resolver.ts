import { Inject } from '@nestjs/common';
import { Args, Mutation, Query, Resolver } from '@nestjs/graphql';
import { AdminOnly, CurrentPrincipal, RequireScope } from '../http/decorators/auth.decorators.js';
import type { Principal } from '../../domain/users/principal.js';
import { RequireFeature } from '../http/guards/feature.guard.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { presentAdminReport, presentSkillDetail, presentSkillList } from '../presenters/skill.presenter.js';
import { SkillRegistryService, SkillResourcesService } from '@skillhost/nest';
import { ChatContextService } from '../../domain/chats/chat-context.service.js';
import { SkillSearchService } from '../../domain/skills/ranking/skill-search.service.js';
import { SkillReadsService } from '../../domain/skills/skill-reads.service.js';
import { CatalogueArgs, SkillNameArgs, SkillResourceArgs, SkillSearchArgs } from './dto/skill.args.js';
import {
  SkillDetailDto,
  SkillListDto,
  SkillScanReportDto,
  SkillSearchResultDto,
} from '../http/dto/skill-responses.dto.js';
import { SkillResourceModel } from './models/skill.model.js';

/** The twin of SkillsController: SKILLS_DISABLED while skills are off. */
@Resolver()
@RequireScope('skills:read')
@RequireFeature('skills')
export class SkillsResolver {
  constructor(
    private readonly registry: SkillRegistryService,
    private readonly resources: SkillResourcesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly searching: SkillSearchService,
    private readonly contexts: ChatContextService,
    private readonly reads: SkillReadsService,
  ) {}

  @Query(() => SkillListDto, { description: 'The loaded skills (GET /v1/skills).' })
  async skills(@CurrentPrincipal() principal: Principal) {
    return presentSkillList(await this.registry.userViewNow(principal.userId), this.config.app.skills.explicitPrefixes);
  }

  @Query(() => SkillDetailDto, { description: 'One skill with the list of its other files (GET /v1/skills/{name}).' })
  async skill(@Args() { name }: SkillNameArgs, @CurrentPrincipal() principal: Principal) {
    const scope = { snapshot: await this.registry.userView(principal.userId) };
    const skill = this.registry.get(name, scope.snapshot);
    return presentSkillDetail(
      skill,
      await this.resources.listResources(skill.name, undefined, scope),
      scope.snapshot.directories,
    );
  }

  @Query(() => SkillResourceModel, {
    description: 'One file of a skill as text, size-capped (GET /v1/skills/{name}/resources/{path}).',
  })
  async skillResource(@Args() { name, path }: SkillResourceArgs, @CurrentPrincipal() principal: Principal) {
    return this.reads.resource(principal.userId, name, path);
  }

  @Query(() => String, {
    description:
      'The rendered catalogue exactly as a model gets it; empty when no skill is loaded. With `query`, the ' +
      'catalogue a turn with that message would list (GET /v1/skills-catalogue).',
  })
  catalogue(@Args() { format, query }: CatalogueArgs, @CurrentPrincipal() principal: Principal) {
    return this.contexts.previewCatalogue(
      principal,
      query ?? undefined,
      format ?? this.config.app.skills.catalogueFormat,
    );
  }

  @Query(() => [SkillSearchResultDto], {
    description:
      "The caller's skills ranked for a query, best first, as skills.search ranks them (GET /v1/skills/search).",
  })
  searchSkills(@Args() { query, limit }: SkillSearchArgs, @CurrentPrincipal() principal: Principal) {
    return this.searching.searchFor(principal.userId, query, limit ?? undefined);
  }

  @Mutation(() => SkillScanReportDto, {
    description:
      'Rescans the skill directories and swaps the catalogue in one step; admins only (POST /v1/admin/skills/reload).',
  })
  @AdminOnly()
  async reloadSkills() {
    const { snapshot, diff } = await this.registry.reloadEverywhere();
    return { ...presentAdminReport(snapshot), diff };
  }
}
