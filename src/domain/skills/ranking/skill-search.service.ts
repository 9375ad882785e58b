import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../../config/app-config.js';
import { SKILL_USE, type SkillUse } from './skill-use.js';
import { validationFailed } from '../../shared/validation-errors.js';
import {
  type CatalogueChoice,
  CatalogueChooser,
  type CatalogueLimits,
  type CatalogueRequest,
  type CatalogueSnapshot,
  type SkillSearchResult,
  wholeCatalogue,
} from '@skillhost/core';
import { SkillRegistryService } from '@skillhost/nest';
import type { CatalogueFormat } from '../../../config/app-config.js';

/** The team signal: activations within this many days, re-read this often. */
const USE_WINDOW_DAYS = 30;
const USE_REFRESH_MS = 5 * 60_000;
const USE_TOP_SKILLS = 2000;

/**
 * Choosing skills at scale: the catalogue a turn lists (whole, or ranked within the budget),
 * `skills.search`, and the team signal both use (how many chats activated each skill lately, read
 * from PostgreSQL every few minutes; a failed read keeps the last one).
 */
@Injectable()
export class SkillSearchService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('SkillSearch');
  private use: ReadonlyMap<string, number> = new Map();
  private timer: NodeJS.Timeout | undefined;
  private reading: Promise<void> | undefined;
  /** The same choices an embedding app makes, with the team's use of skills as popularity. */
  private readonly chooser: CatalogueChooser;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SKILL_USE) private readonly usage: SkillUse,
    private readonly registry: SkillRegistryService,
  ) {
    this.chooser = new CatalogueChooser(config.app.skills, () => this.use);
  }

  /** `GET /v1/skills/search` and GraphQL `searchSkills`: what skills_search would answer in a new chat of the user. */
  async searchFor(userId: string, query: string, limit?: number, field = 'query'): Promise<SkillSearchResult[]> {
    if (query.trim() === '')
      throw validationFailed([`${field} must say what the skill should do: it is missing, empty or only spaces`]);
    return this.search(await this.registry.viewForUser(userId), query, limit);
  }

  onApplicationBootstrap(): void {
    if (!this.config.app.skills.enabled) return;
    void this.refreshUse();
    this.timer = setInterval(() => void this.refreshUse(), USE_REFRESH_MS);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    await this.reading;
  }

  /**
   * Re-reads the team's use of skills (every few minutes, and when a test asks); a read in flight is joined, not
   * repeated.
   */
  refreshUse(): Promise<void> {
    this.reading ??= this.usage
      .skillUse(USE_WINDOW_DAYS, USE_TOP_SKILLS)
      .then((use) => {
        this.use = use;
      })
      .catch((error: unknown) =>
        this.logger.warn(
          `Could not read how often skills are activated (ranking goes on without it): ${(error as Error).message}`,
        ),
      )
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }

  /** In how many chats each skill was activated lately. */
  get popularity(): ReadonlyMap<string, number> {
    return this.use;
  }

  get limits(): CatalogueLimits {
    return this.chooser.limits;
  }

  /** Whether the view's skills all fit the budget (every turn then lists them all, byte-identical). */
  isComplete(view: CatalogueSnapshot): boolean {
    return this.chooser.isComplete(view);
  }

  /** Whether the model is offered skills.search with this view: with a partial catalogue, or always if configured. */
  offersSearch(view: CatalogueSnapshot): boolean {
    return this.chooser.offersSearch(view);
  }

  /**
   * The catalogue a turn with this message would list. `format` overrides the configured one (the
   * catalogue route). Never with the server's paths (`include_location` gives them to the model of
   * an app that embeds Skillhost and reads files itself; the server's chats read none by path).
   */
  catalogue(
    view: CatalogueSnapshot,
    request: Omit<CatalogueRequest, 'popularity' | 'hideLocations'>,
    format?: CatalogueFormat,
  ): CatalogueChoice {
    return this.chooser.catalogue(view, { ...request, hideLocations: true }, format);
  }

  /**
   * Every skill of the view, whatever the budget (the catalogue route without a message); never with the server's
   * paths.
   */
  wholeCatalogue(view: CatalogueSnapshot, format: CatalogueFormat): string {
    return wholeCatalogue(view, format, true);
  }

  /** The view's skills best matching a query, best first, at most `MAX_SEARCH_RESULTS`. */
  search(view: CatalogueSnapshot, query: string, limit?: number): SkillSearchResult[] {
    return this.chooser.search(view, query, limit);
  }
}
